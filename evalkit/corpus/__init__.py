"""A corpus of sessions: discovery by layout rules (`discover`, `layouts`), per-session records
(`records`), the parsing engines (`parse`: local processes, or a Dask cluster), the column
dictionary (`columns`), each session's frame rows (`frame_rows`), the entity DataFrames
(`frames`) and the loader that ties them together (`load`: discover → parse records → frames;
`evalkit.load_corpus` adds the sweep's tables on top). What is kept between runs is the store
layer's (`evalkit.store`)."""
