using System;
using System.Threading.Tasks;
using Falconet.Http;

namespace Falconet.Server;

/// <summary>
/// A <see cref="FalconetServer"/> whose parser matches an app's own well-known headers (from its <c>*.headers.json</c>)
/// on the fast path, and whose handler sees them as typed properties of <see cref="HttpContext{THeaderSet}"/>.
/// </summary>
/// <typeparam name="THeaderSet">The header set Falconet.Generator emitted from the app's <c>*.headers.json</c>.</typeparam>
public sealed class FalconetServer<THeaderSet> : FalconetServer
    where THeaderSet : struct, IHeaderSet
{
    /// <summary>Creates a server that calls <paramref name="application"/> for every request.</summary>
    public FalconetServer(FalconetServerOptions options, IHttpApplication<THeaderSet> application)
        : base(options, new HeaderSetApplication<THeaderSet>(application), AppHeaderSetBinding<THeaderSet>.Instance)
    {
    }

    /// <summary>Creates a server that calls <paramref name="handler"/> for every request.</summary>
    public FalconetServer(FalconetServerOptions options, Func<HttpContext<THeaderSet>, ValueTask> handler)
        : this(options, new DelegateHttpApplication<THeaderSet>(handler))
    {
    }
}
