using System.Threading;
using Microsoft.Extensions.Logging;

namespace Falconet.Http;

/// <summary>What every connection of a server shares: the application, limits, bounds, logger and the shutdown signal.</summary>
internal sealed class HttpConnectionSettings
{
    public HttpConnectionSettings(IHttpApplication application, HttpLimits limits, long outputBufferLimit,
        long maxRequestBodyDrainSize, ILogger logger, CancellationToken shutdown)
    {
        Application = application;
        Limits = limits;
        OutputBufferLimit = outputBufferLimit;
        MaxRequestBodyDrainSize = maxRequestBodyDrainSize;
        Logger = logger;
        Shutdown = shutdown;
    }

    /// <summary>Requests started on every connection of the server (incremented once per request).</summary>
    public long RequestsStarted;

    public IHttpApplication Application { get; }

    public HttpLimits Limits { get; }

    public long OutputBufferLimit { get; }

    public long MaxRequestBodyDrainSize { get; }

    public ILogger Logger { get; }

    /// <summary>Cancelled when the server stops: idle connections close, busy ones close after their current request.</summary>
    public CancellationToken Shutdown { get; }
}
