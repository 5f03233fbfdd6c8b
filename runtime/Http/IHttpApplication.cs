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
