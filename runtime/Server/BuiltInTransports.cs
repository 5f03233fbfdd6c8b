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

    /// <summary>Whether libuv loads on this machine (the fallback transport's condition).</summary>
    public static bool LibuvAvailable => LibuvTransportFactory.IsAvailable;

    /// <summary>Null when the io_uring transport can run in this process, otherwise why not (the default transport's condition).</summary>
    public static string? IoUringUnavailableReason => IoUringSupport.Current.UnavailableReason;

    /// <summary>
    /// The transport of options that name none, the cheapest per request that this machine can run (docs/benchmarks.md):
    /// io_uring where the kernel allows it; otherwise libuv where it loads; otherwise sockets. Each fallback is logged at
    /// information level with its reason.
    /// </summary>
    /// <param name="ioUringUnavailableReason">Null when io_uring can run; otherwise the sentence that says why not.</param>
    /// <param name="libuvAvailable">Whether the system's libuv 1.x loads.</param>
    /// <param name="logger">Where a fallback is reported.</param>
    public static TransportKind ChooseDefault(string? ioUringUnavailableReason, bool libuvAvailable, ILogger logger)
    {
        if (ioUringUnavailableReason is null)
        {
            return TransportKind.IoUring;
        }

        if (libuvAvailable)
        {
            ServerLog.IoUringUnavailable(logger, ioUringUnavailableReason, "libuv");
            return TransportKind.Libuv;
        }

        ServerLog.IoUringUnavailable(logger, ioUringUnavailableReason, "sockets");
        ServerLog.LibuvUnavailable(logger, LibuvTransportFactory.PackageName);
        return TransportKind.Sockets;
    }
}
