"""The bundled synthetic corpus (issue 4): a generator whose transcripts reproduce the published
explore-allocation figures when swept (`data/corpus`, see its README).

Modules, in the order data flows: `catalog` (invented file catalogs), `calibrate` (solve every
session, call and section's numbers), `source`, `explore`, `answers`, `stream`, `usage` (render
them as stream-json transcripts), `render` (behaviour scripts per session style) and `generate`
(write the files and `truth.csv`). Regenerate with `python -m evalkit.synthetic generate OUT`.
"""

from evalkit.synthetic.generate import SEED, corpus_files, generate_corpus

__all__ = ["SEED", "corpus_files", "generate_corpus"]
