using System;
using System.Threading.Tasks;

namespace Falconet.Http;

/// <summary>The application a server runs: called once per request with the connection's reused context.</summary>
public interface IHttpApplication
{
    /// <summary>Handles one request; the response completes when the returned task does.</summary>
    ValueTask Handle(HttpContext context);
}

/// <summary>Adapts a <see cref="Func{HttpContext, ValueTask}"/> to <see cref="IHttpApplication"/>.</summary>
public sealed class DelegateHttpApplication : IHttpApplication
{
    private readonly Func<HttpContext, ValueTask> _handler;

    /// <summary>Wraps <paramref name="handler"/>.</summary>
    public DelegateHttpApplication(Func<HttpContext, ValueTask> handler)
    {
        ArgumentNullException.ThrowIfNull(handler);
        _handler = handler;
    }

    /// <inheritdoc/>
    public ValueTask Handle(HttpContext context) => _handler(context);
}

/// <summary>An application of a server running an app's own header set: called once per request with the connection's reused, typed context.</summary>
/// <typeparam name="THeaderSet">The header set Falconet.Generator emitted from the app's <c>*.headers.json</c>.</typeparam>
public interface IHttpApplication<THeaderSet>
    where THeaderSet : struct, IHeaderSet
{
    /// <summary>Handles one request; the response completes when the returned task does.</summary>
    ValueTask Handle(HttpContext<THeaderSet> context);
}

/// <summary>Adapts a <see cref="Func{T, TResult}"/> of the typed context to <see cref="IHttpApplication{THeaderSet}"/>.</summary>
/// <typeparam name="THeaderSet">The header set Falconet.Generator emitted from the app's <c>*.headers.json</c>.</typeparam>
public sealed class DelegateHttpApplication<THeaderSet> : IHttpApplication<THeaderSet>
    where THeaderSet : struct, IHeaderSet
{
    private readonly Func<HttpContext<THeaderSet>, ValueTask> _handler;

    /// <summary>Wraps <paramref name="handler"/>.</summary>
    public DelegateHttpApplication(Func<HttpContext<THeaderSet>, ValueTask> handler)
    {
        ArgumentNullException.ThrowIfNull(handler);
        _handler = handler;
    }

    /// <inheritdoc/>
    public ValueTask Handle(HttpContext<THeaderSet> context) => _handler(context);
}

/// <summary>The connection calls every application through <see cref="IHttpApplication"/>; this hands a typed one the context it was made with.</summary>
internal sealed class HeaderSetApplication<THeaderSet> : IHttpApplication
    where THeaderSet : struct, IHeaderSet
{
    private readonly IHttpApplication<THeaderSet> _application;

    public HeaderSetApplication(IHttpApplication<THeaderSet> application)
    {
        ArgumentNullException.ThrowIfNull(application);
        _application = application;
    }

    // The connection of a server of this set makes only HttpContext<THeaderSet> (AppHeaderSetBinding), so the cast holds.
    public ValueTask Handle(HttpContext context) => _application.Handle((HttpContext<THeaderSet>)context);
}
