"""Invented file catalogs for the synthetic corpus: paths, languages and header symbols.

Paths follow the public layout of the repos the published passes used (spec §7.1, §7.6), so a
reader recognises them; every symbol list and every line of source rendered for them is made up
(`render.py`), and none is copied from the projects.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FileInfo", "CATALOG", "LANG", "QUESTIONS", "catalog"]

# Spec §7.6 (passes) and §7.1 (campaign, three turns per repo).
QUESTIONS = {
    "express": ["how does res.send decide Content-Type and ETag?"],
    "excalidraw-ab": ["how does updating an element re-render the canvas on screen?"],
    "client-go": ["how does a shared informer keep its cache in sync and deliver events?"],
    "vscode": [
        "How does the extension host communicate with the main process?",
        "Where in that path would a message be dropped if the extension host crashes?",
        "What would I need to change to add a new message type to that protocol?",
    ],
    "excalidraw": [
        "How does Excalidraw render and update canvas elements?",
        "Which part of that path decides whether a full re-render happens or an incremental one?",
        "If I added a new element type, what in that render path would need to change?",
    ],
    "django": [
        "How does Django's ORM build and execute a query from a QuerySet?",
        "Where in that path is the SQL actually compiled into a string?",
        "What would I change to add a new lookup type to that pipeline?",
    ],
    "tokio": [
        "How does tokio schedule and run async tasks on its runtime?",
        "Where does a task move between the local and the global queue in that path?",
        "What in that path would I touch to add a per-task instrumentation hook?",
    ],
    "okhttp": [
        "How does OkHttp process a request through its interceptor chain?",
        "Where in that chain is the connection actually acquired?",
        "What would I change to add a new interceptor stage before the cache?",
    ],
    "gin": [
        "How does gin route requests through its middleware chain?",
        "Where is the 404 / no-route case handled in that same chain?",
        "What would I change to add a per-route middleware that runs before the global ones?",
    ],
    "alamofire": [
        "How does Alamofire build, send, and validate a request?",
        "Where does retry / interceptor logic hook into that path?",
        "What would I change to add a new validation step to it?",
    ],
}

LANG = {
    ".js": "js",
    ".ts": "ts",
    ".tsx": "tsx",
    ".go": "go",
    ".py": "python",
    ".rs": "rust",
    ".kt": "kotlin",
    ".swift": "swift",
}

_PATHS = {
    "express": """lib/response.js lib/utils.js lib/express.js lib/application.js lib/request.js
        lib/view.js lib/router/index.js lib/router/route.js lib/router/layer.js
        lib/middleware/init.js lib/middleware/query.js lib/router/methods.js lib/etag.js
        lib/content-type.js lib/send-file.js examples/content-negotiation/index.js
        examples/view-constructor/github-view.js benchmarks/middleware.js""",
    "excalidraw": """packages/excalidraw/scene/Scene.ts
        packages/excalidraw/components/canvases/StaticCanvas.tsx
        packages/excalidraw/components/canvases/InteractiveCanvas.tsx
        packages/excalidraw/renderer/staticScene.ts packages/excalidraw/renderer/interactiveScene.ts
        packages/excalidraw/renderer/renderElement.ts packages/element/src/mutateElement.ts
        packages/element/src/shape.ts packages/element/src/bounds.ts
        packages/element/src/newElement.ts packages/element/src/dragElements.ts
        packages/excalidraw/scene/scroll.ts packages/excalidraw/scene/Shape.ts
        packages/excalidraw/store.ts packages/excalidraw/history.ts packages/excalidraw/appState.ts
        packages/excalidraw/actions/actionCanvas.tsx packages/excalidraw/renderer/renderSnaps.ts
        packages/excalidraw/scene/sceneNonce.ts packages/element/src/ShapeCache.ts
        packages/excalidraw/components/canvases/NewElementCanvas.tsx
        packages/excalidraw/animation-frame-handler.ts packages/excalidraw/components/App.tsx""",
    "client-go": """tools/cache/shared_informer.go tools/cache/reflector.go tools/cache/delta_fifo.go
        tools/cache/store.go tools/cache/thread_safe_store.go tools/cache/controller.go
        tools/cache/index.go tools/cache/listwatch.go tools/cache/fifo.go
        tools/cache/expiration_cache.go tools/cache/mutation_detector.go
        tools/cache/reflector_metrics.go tools/cache/listers.go tools/cache/heap.go
        tools/cache/synctrack/synctrack.go informers/factory.go informers/core/v1/pod.go
        listers/core/v1/pod.go kubernetes/typed/core/v1/pod.go tools/watch/retrywatcher.go
        util/workqueue/queue.go rest/request.go tools/record/event.go tools/pager/pager.go
        util/flowcontrol/backoff.go discovery/discovery_client.go transport/round_trippers.go
        tools/leaderelection/leaderelection.go dynamic/simple.go
        applyconfigurations/core/v1/podspec.go kubernetes/typed/apps/v1/deployment.go
        informers/apps/v1/replicaset.go kubernetes/typed/core/v1/fake/fake_pod.go""",
    "vscode": """src/vs/workbench/services/extensions/common/rpcProtocol.ts
        src/vs/workbench/api/node/extensionHostProcess.ts
        src/vs/workbench/services/extensions/electron-sandbox/localProcessExtensionHost.ts
        src/vs/base/parts/ipc/common/ipc.ts src/vs/base/parts/ipc/node/ipc.net.ts
        src/vs/workbench/api/common/extHost.protocol.ts
        src/vs/workbench/api/common/extHostExtensionService.ts
        src/vs/workbench/services/extensions/common/abstractExtensionService.ts
        src/vs/workbench/services/extensions/common/extensionHostManager.ts
        src/vs/base/common/event.ts src/vs/workbench/api/common/extHostCommands.ts
        src/vs/workbench/api/browser/mainThreadCommands.ts
        src/vs/workbench/services/extensions/common/proxyIdentifier.ts
        src/vs/workbench/services/extensions/common/extensionHostProtocol.ts
        src/vs/base/common/buffer.ts src/vs/workbench/api/browser/mainThreadExtensionService.ts
        src/vs/workbench/services/extensions/common/lazyPromise.ts
        src/vs/base/parts/ipc/common/ipc.mp.ts src/vs/platform/extensions/common/extensions.ts
        src/vs/workbench/api/common/extHostRpcService.ts
        src/vs/workbench/services/extensions/common/extensionHostKind.ts
        src/vs/base/common/async.ts src/vs/base/common/lifecycle.ts
        src/vs/workbench/api/common/extHostTypes.ts
        src/vs/workbench/services/extensions/common/remoteExtensionHost.ts""",
    "django": """django/db/models/query.py django/db/models/sql/query.py
        django/db/models/sql/compiler.py django/db/models/sql/where.py
        django/db/models/lookups.py django/db/models/expressions.py
        django/db/models/query_utils.py django/db/models/fields/__init__.py
        django/db/backends/base/operations.py django/db/models/sql/datastructures.py
        django/db/models/manager.py django/db/backends/utils.py
        django/db/models/fields/related_lookups.py django/db/models/sql/constants.py
        django/db/models/sql/subqueries.py django/db/models/aggregates.py
        django/db/models/functions/comparison.py django/db/backends/postgresql/operations.py
        django/db/models/deletion.py django/db/models/base.py""",
    "tokio": """tokio/src/runtime/scheduler/multi_thread/worker.rs
        tokio/src/runtime/scheduler/multi_thread/queue.rs
        tokio/src/runtime/scheduler/multi_thread/handle.rs tokio/src/runtime/task/harness.rs
        tokio/src/runtime/task/raw.rs tokio/src/runtime/task/state.rs
        tokio/src/runtime/scheduler/inject.rs tokio/src/runtime/builder.rs
        tokio/src/runtime/runtime.rs tokio/src/task/spawn.rs tokio/src/runtime/context.rs
        tokio/src/runtime/park.rs tokio/src/runtime/scheduler/current_thread/mod.rs
        tokio/src/runtime/task/core.rs tokio/src/runtime/metrics/worker.rs
        tokio/src/runtime/task/list.rs tokio/src/runtime/scheduler/multi_thread/idle.rs""",
    "okhttp": """okhttp/src/main/kotlin/okhttp3/internal/http/RealInterceptorChain.kt
        okhttp/src/main/kotlin/okhttp3/internal/connection/RealCall.kt
        okhttp/src/main/kotlin/okhttp3/internal/connection/ExchangeFinder.kt
        okhttp/src/main/kotlin/okhttp3/internal/connection/RealConnectionPool.kt
        okhttp/src/main/kotlin/okhttp3/internal/cache/CacheInterceptor.kt
        okhttp/src/main/kotlin/okhttp3/internal/http/BridgeInterceptor.kt
        okhttp/src/main/kotlin/okhttp3/internal/http/RetryAndFollowUpInterceptor.kt
        okhttp/src/main/kotlin/okhttp3/internal/connection/ConnectInterceptor.kt
        okhttp/src/main/kotlin/okhttp3/internal/http/CallServerInterceptor.kt
        okhttp/src/main/kotlin/okhttp3/OkHttpClient.kt
        okhttp/src/main/kotlin/okhttp3/Interceptor.kt
        okhttp/src/main/kotlin/okhttp3/internal/connection/Exchange.kt
        okhttp/src/main/kotlin/okhttp3/internal/connection/RealConnection.kt
        okhttp/src/main/kotlin/okhttp3/internal/http1/Http1ExchangeCodec.kt
        okhttp/src/main/kotlin/okhttp3/internal/http2/Http2ExchangeCodec.kt
        okhttp/src/main/kotlin/okhttp3/Dispatcher.kt okhttp/src/main/kotlin/okhttp3/Cache.kt
        okhttp/src/main/kotlin/okhttp3/internal/connection/RouteSelector.kt""",
    "gin": """gin.go context.go routergroup.go tree.go recovery.go logger.go errors.go utils.go
        response_writer.go auth.go mode.go path.go binding/binding.go render/render.go
        render/json.go fs.go ginS/gins.go internal/bytesconv/bytesconv.go""",
    "alamofire": """Source/Core/Session.swift Source/Core/Request.swift Source/Core/DataRequest.swift
        Source/Features/Validation.swift Source/Features/RequestInterceptor.swift
        Source/Features/RetryPolicy.swift Source/Core/SessionDelegate.swift
        Source/Core/RequestTaskMap.swift Source/Features/ResponseSerialization.swift
        Source/Extensions/URLRequest+Alamofire.swift Source/Features/EventMonitor.swift
        Source/Core/AFError.swift Source/Features/AuthenticationInterceptor.swift
        Source/Core/HTTPHeaders.swift Source/Core/ParameterEncoder.swift
        Source/Core/UploadRequest.swift Source/Core/DownloadRequest.swift
        Source/Features/ServerTrustEvaluation.swift Source/Features/CachedResponseHandler.swift
        Source/Core/Protected.swift Source/Features/RedirectHandler.swift""",
}

_KINDS = {
    "js": ["function", "method", "function", "property", "variable"],
    "ts": ["function", "class", "method", "interface", "type_alias", "constant"],
    "tsx": ["component", "function", "method", "interface", "constant"],
    "go": ["function", "method", "struct", "interface", "field"],
    "python": ["class", "method", "function", "method", "constant"],
    "rust": ["function", "struct", "method", "enum", "trait"],
    "kotlin": ["class", "function", "property", "interface", "function"],
    "swift": ["class", "method", "struct", "protocol", "enum"],
}
_VERBS = [
    "handle",
    "resolve",
    "apply",
    "build",
    "process",
    "dispatch",
    "compute",
    "flush",
    "register",
    "prepare",
    "collect",
    "schedule",
    "notify",
    "install",
    "drain",
    "encode",
]

# Hand-picked header symbols where the seed or the spec names them.
_FIXED = {
    "lib/response.js": [
        ("res.send", "method"),
        ("res.json", "method"),
        ("res.set", "method"),
        ("res.type", "method"),
        ("sendEntity", "function"),
        ("res.format", "method"),
    ],
    "lib/utils.js": [
        ("etagFactory", "function"),
        ("setCharsetParam", "function"),
        ("normalizeTypeValue", "function"),
        ("wetag", "variable"),
        ("generateETagFor", "function"),
    ],
    "lib/application.js": [
        ("compileETag", "variable"),
        ("app.set", "method"),
        ("app.defaultConfiguration", "method"),
        ("app.handle", "method"),
    ],
    "lib/express.js": [
        ("createApplication", "function"),
        ("exports.Router", "property"),
        ("exports.static", "property"),
    ],
    "packages/excalidraw/scene/Scene.ts": [
        ("Scene", "class"),
        ("triggerUpdate", "method"),
        ("getSceneNonce", "method"),
        ("replaceAllElements", "method"),
    ],
    "packages/excalidraw/components/canvases/StaticCanvas.tsx": [
        ("StaticCanvas", "component"),
        ("areEqual", "function"),
        ("getRelevantAppStateProps", "function"),
    ],
    "packages/element/src/mutateElement.ts": [
        ("mutateElement", "function"),
        ("newElementWith", "function"),
        ("bumpVersion", "function"),
    ],
    "tools/cache/shared_informer.go": [
        ("sharedIndexInformer", "struct"),
        ("NewSharedIndexInformer", "function"),
        ("sharedProcessor", "struct"),
        ("processorListener", "struct"),
    ],
}


@dataclass(frozen=True)
class FileInfo:
    """A catalog file: path, fence language, and its defined symbols (name, kind)."""

    path: str
    lang: str
    symbols: tuple[tuple[str, str], ...]


def _camel(stem: str) -> str:
    parts = [p for p in stem.replace("-", "_").replace(".", "_").replace("+", "_").split("_") if p]
    return "".join(p[:1].upper() + p[1:] for p in parts) or "Module"


def _make(path: str, salt: int) -> FileInfo:
    base = path.rsplit("/", 1)[-1]
    stem, ext = base.rsplit(".", 1)
    lang = LANG["." + ext]
    if stem in ("index", "mod", "__init__"):
        stem = path.rsplit("/", 2)[-2] + "_" + stem.strip("_")
    if path in _FIXED:
        return FileInfo(path, lang, tuple(_FIXED[path]))
    camel = _camel(stem)
    kinds = _KINDS[lang]
    syms = []
    for j in range(5):
        verb = _VERBS[(salt * 7 + j * 5) % len(_VERBS)]
        kind = kinds[j % len(kinds)]
        if kind in ("class", "struct", "component", "interface", "protocol", "trait"):
            name = camel + ("" if j == 0 else ["Options", "State", "Config", "Entry"][j % 4])
        elif kind in ("method",) and lang in ("js",):
            name = f"{camel[:1].lower()}{camel[1:]}.{verb}"
        else:
            name = verb + camel
        syms.append((name, kind))
    return FileInfo(path, lang, tuple(syms))


def _build(paths: list[str]) -> tuple[FileInfo, ...]:
    """Catalog entries with symbol names unique within the repo (a second `worker.rs` gets
    its directory as a prefix), so a symbol citation identifies the file it was meant for."""
    seen: set[str] = set()
    out = []
    for i, path in enumerate(paths):
        f = _make(path, i)
        dirs = path.split("/")[:-1][::-1] or ["root"]
        syms = []
        for name, kind in f.symbols:
            base, k = name, 0
            while name in seen:
                prefix = _camel("_".join(reversed(dirs[: k + 1])))
                name = prefix[:1].lower() + prefix[1:] + base[:1].upper() + base[1:]
                k += 1
            seen.add(name)
            syms.append((name, kind))
        out.append(FileInfo(f.path, f.lang, tuple(syms)))
    return tuple(out)


CATALOG: dict[str, tuple[FileInfo, ...]] = {
    repo: _build(paths.split()) for repo, paths in _PATHS.items()
}


def catalog(repo: str) -> tuple[FileInfo, ...]:
    return CATALOG[repo]


def file_info(repo: str, path: str) -> FileInfo:
    for f in CATALOG[repo]:
        if f.path == path:
            return f
    raise KeyError(path)
