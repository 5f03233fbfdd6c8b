using System;
using System.Threading;
using Falconet.Http.Http1;
using Falconet.Server;
using Microsoft.Extensions.Logging;

namespace Falconet.Http;

/// <summary>What every connection of a server shares: the application, limits, bounds, timeouts, clock, logger and the shutdown signal.</summary>
internal sealed class HttpConnectionSettings
{
    /// <summary>How long a lingering close reads and discards what the peer still sends before closing.</summary>
    public static readonly TimeSpan LingerTime = TimeSpan.FromSeconds(2);

    /// <summary>The most bytes a lingering close reads and discards.</summary>
    public const long LingerMaxBytes = 1024 * 1024;

    public HttpConnectionSettings(IHttpApplication application, HttpLimits limits, long outputBufferLimit,
        long maxRequestBodyDrainSize, TimeSpan keepAliveTimeout, TimeSpan requestHeadersTimeout,
        TimeProvider timeProvider, ILogger logger, CancellationToken shutdown, Action<ServerConnection>? connectionClosed = null)
    {
        Application = application;
        Limits = limits;
        OutputBufferLimit = outputBufferLimit;
        MaxRequestBodyDrainSize = maxRequestBodyDrainSize;
        TimeProvider = timeProvider;
        KeepAliveTimeout = ToTimestampTicks(keepAliveTimeout, timeProvider);
        RequestHeadersTimeout = ToTimestampTicks(requestHeadersTimeout, timeProvider);
        LingerTimeout = ToTimestampTicks(LingerTime, timeProvider);
        Logger = logger;
        Shutdown = shutdown;
        ConnectionClosed = connectionClosed;
    }

    public IHttpApplication Application { get; }

    public HttpLimits Limits { get; }

    public long OutputBufferLimit { get; }

    public long MaxRequestBodyDrainSize { get; }

    /// <summary>The clock of deadlines: <see cref="TimeProvider.GetTimestamp"/> units.</summary>
    public TimeProvider TimeProvider { get; }

    /// <summary>Idle time allowed before the first byte of the next request, in timestamp ticks (<see cref="long.MaxValue"/>: none).</summary>
    public long KeepAliveTimeout { get; }

    /// <summary>Time allowed from the first byte of a request to the end of its header section, in timestamp ticks.</summary>
    public long RequestHeadersTimeout { get; }

    /// <summary>The initial <see cref="HttpResponse.AllowSynchronousWrites"/> of every request.</summary>
    public bool AllowSynchronousWrites { get; init; }

    /// <summary>The header set every connection parses into and hands the application.</summary>
    public HeaderSetBinding HeaderSet { get; init; } = HeaderSetBinding.BuiltIn;
    /// <summary>Whether CONNECT reaches the application; otherwise the server answers it with 501.</summary>
    public bool AllowConnect { get; init; }

    /// <summary>The least rate a request body must arrive at while the server waits for it (default: none).</summary>
    public DataRateLimit MinRequestBodyDataRate { get; init; }

    /// <summary>The least rate a client must read the response at while a send waits for it (default: none).</summary>
    public DataRateLimit MinResponseDataRate { get; init; }

    /// <summary>The server's option <see cref="MinRequestBodyDataRate"/> was made from, as a request reads it back.</summary>
    public MinDataRate? MinRequestBodyRate { get; init; }

    /// <summary>The server's option <see cref="MinResponseDataRate"/> was made from, as a request reads it back.</summary>
    public MinDataRate? MinResponseRate { get; init; }

    /// <summary>
    /// How long, in timestamp ticks, a connection idle when the server stops may stay open for a request its client may be
    /// sending right then (answered with Connection: close); 0 closes idle connections at once.
    /// </summary>
    public long DrainIdleTimeout { get; init; }

    /// <summary><see cref="LingerTime"/> in timestamp ticks.</summary>
    public long LingerTimeout { get; }

    public ILogger Logger { get; }

    /// <summary>Cancelled when the server stops: idle connections close, busy ones close after their current request.</summary>
    public CancellationToken Shutdown { get; }

    /// <summary>Called once a connection has ended and returned its blocks.</summary>
    public Action<ServerConnection>? ConnectionClosed { get; }

    /// <summary>The HTTP/2 settings and bounds of every HTTP/2 connection.</summary>
    public Http2Limits Http2 { get; init; } = new();

    /// <summary>The deadline <paramref name="timeout"/> (timestamp ticks) from now, saturating at <see cref="ConnectionDeadline.NeverPasses"/>.</summary>
    public long DeadlineAfter(long timeout)
    {
        if (timeout == ConnectionDeadline.None)
        {
            return ConnectionDeadline.NeverPasses;
        }

        long now = TimeProvider.GetTimestamp();
        return now > ConnectionDeadline.NeverPasses - timeout ? ConnectionDeadline.NeverPasses : now + timeout;
    }

    internal static long ToTimestampTicks(TimeSpan timeout, TimeProvider timeProvider)
    {
        if (timeout == Timeout.InfiniteTimeSpan)
        {
            return ConnectionDeadline.None;
        }

        double ticks = timeout.TotalSeconds * timeProvider.TimestampFrequency;
        return ticks >= ConnectionDeadline.NeverPasses ? ConnectionDeadline.NeverPasses : (long)ticks;
    }
}
