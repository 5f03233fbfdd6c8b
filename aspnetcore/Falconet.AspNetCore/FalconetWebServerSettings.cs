using System.Threading;
using Microsoft.Extensions.Logging;

namespace Falconet.AspNetCore;

/// <summary>What every connection of an ASP.NET Core server shares: its logger, the request defaults from the options, and the host's stopping signal.</summary>
internal sealed class FalconetWebServerSettings
{
    public FalconetWebServerSettings(ILogger logger, long maxRequestBodySize, bool allowSynchronousIO, CancellationToken stopping = default)
    {
        Logger = logger;
        MaxRequestBodySize = maxRequestBodySize;
        AllowSynchronousIO = allowSynchronousIO;
        Stopping = stopping;
    }

    public ILogger Logger { get; }

    /// <summary>The server-wide body limit, enforced by Falconet before the application runs.</summary>
    public long MaxRequestBodySize { get; }

    public bool AllowSynchronousIO { get; }

    /// <summary>Cancelled when the host begins to stop (IHostApplicationLifetime.ApplicationStopping).</summary>
    public CancellationToken Stopping { get; }
}
