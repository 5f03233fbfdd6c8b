using System;
using System.Diagnostics.CodeAnalysis;
using System.Globalization;
using Falconet.Server;
using Falconet.Transport;
using Falconet.Transport.Libuv;

namespace Falconet.Samples.Plaintext;

/// <summary>
/// The sample's command line: --port N (default 8080), --transport sockets|libuv|iouring, --scheduling threadpool|iothreads,
/// --batch-scheduling auto|on|off, --libuv-distribution reuseport|handoff, --iouring-sqpoll, --iouring-batch-wait MICROSECONDS, --max-connections N, --stats, --protocols http1|http2|http1and2,
/// and HTTPS with --https-port N plus either --https-cert FILE --https-key FILE (PEM) or --https-pfx FILE [--https-password P]
/// [--tls-engine auto|openssl|sslstream];
/// deployment: --unix-socket PATH, --proxy-protocol [--trusted-proxy CIDR]..., --reuseport, --drain-delay SECONDS,
/// --drain-idle-timeout SECONDS, --shutdown-timeout SECONDS; an option left out takes the server's default.
/// </summary>
internal sealed class SampleArguments
{
    public int Port { get; private set; } = 8080;

    public TransportKind? Transport { get; private set; }

    public IoScheduling? Scheduling { get; private set; }

    /// <summary>--tls-engine auto|openssl|sslstream: <see cref="TlsServerOptions.Engine"/> (default auto).</summary>
    public TlsEngine TlsEngine { get; private set; } = TlsEngine.Auto;

    /// <summary>--batch-scheduling auto|on|off: <see cref="FalconetServerOptions.BatchScheduling"/>.</summary>
    public BatchScheduling BatchScheduling { get; private set; }

    public LibuvDistribution? Distribution { get; private set; }

    /// <summary>io_uring with a kernel thread polling each submission queue (IORING_SETUP_SQPOLL).</summary>
    public bool SubmissionPolling { get; private set; }

    /// <summary>--iouring-batch-wait MICROSECONDS: io_uring's batched turns (<c>IoUringTransportOptions.BatchedTurnWait</c>).</summary>
    public TimeSpan? BatchedTurnWait { get; private set; }

    public bool Stats { get; private set; }

    /// <summary>The HTTPS port, or null to serve plain HTTP only.</summary>
    public int? HttpsPort { get; private set; }

    public string? HttpsCertificate { get; private set; }

    public string? HttpsKey { get; private set; }

    public string? HttpsPfx { get; private set; }

    public string? HttpsPassword { get; private set; }

    public int? MaxConnections { get; private set; }

    /// <summary>--h2c-port N: an extra plain endpoint that serves HTTP/2 only (prior knowledge, as h2load speaks it).</summary>
    public int? H2cPort { get; private set; }

    /// <summary>--protocols http1|http2|http1and2: what every endpoint serves (default both).</summary>
    public HttpProtocols Protocols { get; private set; } = HttpProtocols.Http1AndHttp2;

    /// <summary>A Unix domain socket to listen on besides the TCP port.</summary>
    public string? UnixSocket { get; private set; }

    /// <summary>Every plain endpoint expects a PROXY protocol header.</summary>
    public bool ProxyProtocol { get; private set; }

    /// <summary>The networks PROXY headers are accepted from (none: any).</summary>
    public System.Collections.Generic.List<System.Net.IPNetwork> TrustedProxies { get; } = new();

    public bool ReusePort { get; private set; }

    public TimeSpan? DrainDelay { get; private set; }

    public TimeSpan? ShutdownTimeout { get; private set; }

    public TimeSpan? DrainIdleTimeout { get; private set; }

    /// <summary>The number of I/O threads (libuv loops, or the sockets transport's I/O threads), or null for one per processor.</summary>
    public int? IoThreads { get; private set; }

    public static bool TryParse(string[] args, [NotNullWhen(true)] out SampleArguments? parsed, [NotNullWhen(false)] out string? error)
    {
        var result = new SampleArguments();
        parsed = null;
        for (int i = 0; i < args.Length; i++)
        {
            switch (args[i])
            {
                case "--port":
                    if (!TryParsePort(args, ref i, out int port))
                    {
                        error = "--port needs a number between 0 and 65535.";
                        return false;
                    }

                    result.Port = port;
                    break;
                case "--https-port":
                    if (!TryParsePort(args, ref i, out int httpsPort))
                    {
                        error = "--https-port needs a number between 0 and 65535.";
                        return false;
                    }

                    result.HttpsPort = httpsPort;
                    break;
                case "--https-cert" or "--https-key" or "--https-pfx" or "--https-password":
                    string option = args[i];
                    if (i + 1 >= args.Length)
                    {
                        error = $"{option} needs a value.";
                        return false;
                    }

                    string value = args[++i];
                    switch (option)
                    {
                        case "--https-cert": result.HttpsCertificate = value; break;
                        case "--https-key": result.HttpsKey = value; break;
                        case "--https-pfx": result.HttpsPfx = value; break;
                        default: result.HttpsPassword = value; break;
                    }

                    break;
                case "--transport":
                    string? transport = i + 1 < args.Length ? args[++i] : null;
                    if (string.Equals(transport, "sockets", StringComparison.OrdinalIgnoreCase))
                    {
                        result.Transport = TransportKind.Sockets;
                    }
                    else if (string.Equals(transport, "libuv", StringComparison.OrdinalIgnoreCase))
                    {
                        result.Transport = TransportKind.Libuv;
                    }
                    else if (string.Equals(transport, "iouring", StringComparison.OrdinalIgnoreCase))
                    {
                        result.Transport = TransportKind.IoUring;
                    }
                    else
                    {
                        error = "--transport is 'sockets', 'libuv' or 'iouring'.";
                        return false;
                    }

                    break;
                case "--scheduling":
                    string? scheduling = i + 1 < args.Length ? args[++i] : null;
                    if (string.Equals(scheduling, "threadpool", StringComparison.OrdinalIgnoreCase))
                    {
                        result.Scheduling = IoScheduling.ThreadPool;
                    }
                    else if (string.Equals(scheduling, "iothreads", StringComparison.OrdinalIgnoreCase))
                    {
                        result.Scheduling = IoScheduling.IoThreads;
                    }
                    else
                    {
                        error = "--scheduling is 'threadpool' or 'iothreads' (default: the transport's own).";
                        return false;
                    }

                    break;
                case "--tls-engine":
                    TlsEngine? engine = (i + 1 < args.Length ? args[++i] : null)?.ToLowerInvariant() switch
                    {
                        "auto" => TlsEngine.Auto,
                        "sslstream" => TlsEngine.SslStream,
                        "openssl" => TlsEngine.OpenSsl,
                        _ => null,
                    };
                    if (engine is not { } chosenEngine)
                    {
                        error = "--tls-engine is 'auto', 'openssl' or 'sslstream' (default: auto, the OpenSSL engine where it can run).";
                        return false;
                    }

                    result.TlsEngine = chosenEngine;
                    break;
                case "--batch-scheduling":
                    BatchScheduling? batchScheduling = (i + 1 < args.Length ? args[++i] : null)?.ToLowerInvariant() switch
                    {
                        "auto" => BatchScheduling.Auto,
                        "on" => BatchScheduling.On,
                        "off" => BatchScheduling.Off,
                        _ => null,
                    };
                    if (batchScheduling is not { } chosen)
                    {
                        error = "--batch-scheduling is 'auto', 'on' or 'off' (default: auto).";
                        return false;
                    }

                    result.BatchScheduling = chosen;
                    break;
                case "--libuv-distribution":
                    string? distribution = i + 1 < args.Length ? args[++i] : null;
                    if (string.Equals(distribution, "reuseport", StringComparison.OrdinalIgnoreCase))
                    {
                        result.Distribution = LibuvDistribution.ReusePort;
                    }
                    else if (string.Equals(distribution, "handoff", StringComparison.OrdinalIgnoreCase))
                    {
                        result.Distribution = LibuvDistribution.Handoff;
                    }
                    else
                    {
                        error = "--libuv-distribution is 'reuseport' or 'handoff'.";
                        return false;
                    }

                    result.Transport = TransportKind.Libuv;
                    break;
                case "--iouring-sqpoll":
                    result.SubmissionPolling = true;
                    result.Transport = TransportKind.IoUring;
                    break;
                case "--iouring-batch-wait":
                    if (i + 1 >= args.Length || !int.TryParse(args[++i], NumberStyles.None, CultureInfo.InvariantCulture, out int wait) || wait < 1 || wait > 10_000)
                    {
                        error = "--iouring-batch-wait needs a number of microseconds from 1 to 10000.";
                        return false;
                    }

                    result.BatchedTurnWait = TimeSpan.FromMicroseconds(wait);
                    result.Transport = TransportKind.IoUring;
                    break;
                case "--stats":
                    result.Stats = true;
                    break;
                case "--unix-socket":
                    if (i + 1 >= args.Length)
                    {
                        error = "--unix-socket needs a path.";
                        return false;
                    }

                    result.UnixSocket = args[++i];
                    break;
                case "--proxy-protocol":
                    result.ProxyProtocol = true;
                    break;
                case "--trusted-proxy":
                    if (i + 1 >= args.Length || !System.Net.IPNetwork.TryParse(args[++i], out System.Net.IPNetwork network))
                    {
                        error = "--trusted-proxy needs a network, such as 127.0.0.0/8.";
                        return false;
                    }

                    result.TrustedProxies.Add(network);
                    break;
                case "--reuseport":
                    result.ReusePort = true;
                    break;
                case "--drain-delay" or "--shutdown-timeout" or "--drain-idle-timeout":
                    string timeOption = args[i];
                    if (i + 1 >= args.Length || !double.TryParse(args[++i], NumberStyles.AllowDecimalPoint, CultureInfo.InvariantCulture, out double seconds))
                    {
                        error = $"{timeOption} needs a number of seconds.";
                        return false;
                    }

                    if (timeOption == "--drain-delay")
                    {
                        result.DrainDelay = TimeSpan.FromSeconds(seconds);
                    }
                    else if (timeOption == "--drain-idle-timeout")
                    {
                        result.DrainIdleTimeout = TimeSpan.FromSeconds(seconds);
                    }
                    else
                    {
                        result.ShutdownTimeout = TimeSpan.FromSeconds(seconds);
                    }

                    break;
                case "--max-connections":
                    if (i + 1 >= args.Length || !int.TryParse(args[++i], NumberStyles.None, CultureInfo.InvariantCulture, out int max) || max < 1)
                    {
                        error = "--max-connections needs a positive number.";
                        return false;
                    }

                    result.MaxConnections = max;
                    break;
                case "--h2c-port":
                    if (!TryParsePort(args, ref i, out int h2cPort))
                    {
                        error = "--h2c-port needs a port number.";
                        return false;
                    }

                    result.H2cPort = h2cPort;
                    break;
                case "--protocols":
                    switch (i + 1 < args.Length ? args[++i] : null)
                    {
                        case "http1":
                            result.Protocols = HttpProtocols.Http1;
                            break;
                        case "http2":
                            result.Protocols = HttpProtocols.Http2;
                            break;
                        case "http1and2":
                            result.Protocols = HttpProtocols.Http1AndHttp2;
                            break;
                        default:
                            error = "--protocols needs http1, http2 or http1and2.";
                            return false;
                    }

                    break;
                case "--io-threads":
                    if (i + 1 >= args.Length || !int.TryParse(args[++i], NumberStyles.None, CultureInfo.InvariantCulture, out int ioThreads) || ioThreads < 1)
                    {
                        error = "--io-threads needs a positive number.";
                        return false;
                    }

                    result.IoThreads = ioThreads;
                    break;
                case "-h" or "--help":
                    error = "Falconet TechEmpower sample.";
                    return false;
                default:
                    error = $"Unknown option '{args[i]}'.";
                    return false;
            }
        }

        error = result.HttpsError();
        if (error is not null)
        {
            return false;
        }

        parsed = result;
        return true;
    }

    private static bool TryParsePort(string[] args, ref int i, out int port)
    {
        port = 0;
        return i + 1 < args.Length && int.TryParse(args[++i], NumberStyles.None, CultureInfo.InvariantCulture, out port) && port <= 65535;
    }

    /// <summary>HTTPS needs a port and exactly one certificate source.</summary>
    private string? HttpsError()
    {
        bool pem = HttpsCertificate is not null || HttpsKey is not null;
        bool pfx = HttpsPfx is not null;
        if (HttpsPort is null)
        {
            return pem || pfx || HttpsPassword is not null ? "--https-cert, --https-key and --https-pfx need --https-port." : null;
        }

        if (pem == pfx)
        {
            return "--https-port needs either --https-cert and --https-key (PEM files) or --https-pfx.";
        }

        return pem && (HttpsCertificate is null || HttpsKey is null) ? "--https-cert and --https-key go together." : null;
    }
}
