using Microsoft.Extensions.Logging;

namespace Falconet.AspNetCore;

/// <summary>What every connection of an ASP.NET Core server shares: its logger and the request defaults from the options.</summary>
internal sealed class FalconetWebServerSettings
{
    public FalconetWebServerSettings(ILogger logger, long maxRequestBodySize, bool allowSynchronousIO)
    {
        Logger = logger;
        MaxRequestBodySize = maxRequestBodySize;
        AllowSynchronousIO = allowSynchronousIO;
    }

    public ILogger Logger { get; }

    /// <summary>The server-wide body limit, enforced by Falconet before the application runs.</summary>
    public long MaxRequestBodySize { get; }

    public bool AllowSynchronousIO { get; }
}
