using System;
using Falconet.Transport;
using Falconet.Transport.IoUring;
using Falconet.Transport.Libuv;
using Falconet.Transport.Sockets;
using Microsoft.Extensions.Logging;

namespace Falconet.Server;

/// <summary>
/// The one place outside <c>runtime/Transport/&lt;name&gt;/</c> that names a concrete transport: the built-in transport of
/// a <see cref="TransportKind"/>, and the default kind. Everything else sees the transport contract only.
/// </summary>
internal static class BuiltInTransports
{
    /// <summary>The transport of <paramref name="kind"/>, configured from the server's options; the server owns and disposes it.</summary>
    /// <exception cref="NotSupportedException">The kind is unknown, or its transport cannot run here (libuv not installed, io_uring not usable: the message says why).</exception>
    public static ITransportFactory Create(TransportKind kind, FalconetServerOptions options, int maxConnections) => kind switch
    {
        TransportKind.Sockets => new SocketTransportFactory(new SocketTransportOptions { Scheduling = options.Scheduling ?? IoScheduling.ThreadPool, IoThreadCount = options.IoThreadCount, TrackLeaks = options.TrackPoolLeaks, ReusePort = options.ReusePort }),
        TransportKind.Libuv => new LibuvTransportFactory(new LibuvTransportOptions { Scheduling = options.Scheduling ?? IoScheduling.IoThreads, LoopCount = options.IoThreadCount, TrackLeaks = options.TrackPoolLeaks, LoggerFactory = options.LoggerFactory, MaxConnections = maxConnections, ReusePort = options.ReusePort }),
        TransportKind.IoUring => new IoUringTransportFactory(new IoUringTransportOptions { Scheduling = options.Scheduling ?? IoScheduling.IoThreads, LoopCount = options.IoThreadCount, TrackLeaks = options.TrackPoolLeaks, LoggerFactory = options.LoggerFactory, MaxConnections = maxConnections, ReusePort = options.ReusePort }),
        _ => throw new NotSupportedException($"Unknown transport {kind}."),
    };

    /// <summary>Null when io_uring can be used here; otherwise why not (the default transport's first condition).</summary>
    public static string? IoUringUnavailable => IoUringTransportFactory.UnavailableReason;

    /// <summary>Whether libuv loads on this machine (the default transport's second condition).</summary>
    public static bool LibuvAvailable => LibuvTransportFactory.IsAvailable;

    /// <summary>
    /// The transport of options that name none, the fastest this machine can run: io_uring, else libuv, else sockets. A
    /// fallback is logged once, in one line that says why io_uring (and libuv) cannot be used.
    /// </summary>
    /// <param name="ioUringUnavailable">Null when io_uring can be used; otherwise why not.</param>
    /// <param name="libuvAvailable">True when the system's libuv loads.</param>
    /// <param name="logger">Where the fallback is logged.</param>
    public static TransportKind ChooseDefault(string? ioUringUnavailable, bool libuvAvailable, ILogger logger)
    {
        // io_uring serves a request with the least CPU, then libuv (docs/benchmarks.md); sockets needs nothing beyond .NET.
        if (ioUringUnavailable is null)
        {
            return TransportKind.IoUring;
        }

        if (libuvAvailable)
        {
            ServerLog.IoUringUnavailable(logger, ioUringUnavailable);
            return TransportKind.Libuv;
        }

        ServerLog.IoUringAndLibuvUnavailable(logger, ioUringUnavailable, LibuvTransportFactory.PackageName);
        return TransportKind.Sockets;
    }
}
