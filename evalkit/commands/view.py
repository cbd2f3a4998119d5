"""`evalkit view [DIR]` — build the report into a temporary folder and serve it on 127.0.0.1."""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile

from evalkit.commands.report import add_corpus_options, report_options
from evalkit.errors import UsageError

DESCRIPTION = """\
Build the HTML report of a corpus (as `evalkit report` does) into a temporary
folder and serve it on 127.0.0.1 until Ctrl-C; the address is printed. The
server answers only on this machine's loopback address and serves only the
report's own files. --open also opens it in your browser. The temporary folder
is removed when the server stops."""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "view",
        help="build the HTML report and serve it on 127.0.0.1 until Ctrl-C",
        description=DESCRIPTION,
        epilog="examples:\n  evalkit view\n  evalkit view runs/ --layout harbor --open\n\n"
        "exit status: 0 stopped; 2 unusable input; 130 interrupted while building.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_corpus_options(p)
    p.add_argument(
        "--port", type=int, default=0, metavar="N", help="port to use (default: a free one)"
    )
    p.add_argument("--open", action="store_true", help="open the report in a browser")
    p.set_defaults(func=_run)


def _run(args) -> int:
    from evalkit.outputs.html.serve import make_server
    from evalkit.outputs.html.site import write_report

    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be 0 to 65535, got {args.port}")
    opts = report_options(args)
    folder = tempfile.mkdtemp(prefix="evalkit-report-")
    try:
        written = write_report(args.dir, folder + "/site", opts)
        try:
            server = make_server(folder + "/site", args.port)
        except OSError as exc:
            raise UsageError(f"--port {args.port}: cannot listen ({exc.strerror})") from None
        host, port = server.server_address[:2]
        url = f"http://{host}:{port}/"
        print(f"serving the report of {written.sessions} sessions at {url} (Ctrl-C stops)")
        sys.stdout.flush()
        if args.open:
            import webbrowser

            webbrowser.open(url)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            print("stopped")
        finally:
            server.server_close()
        return 0
    finally:
        shutil.rmtree(folder, ignore_errors=True)
