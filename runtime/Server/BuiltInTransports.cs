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

    /// <summary>Whether libuv loads on this machine (the default transport's condition).</summary>
    public static bool LibuvAvailable => LibuvTransportFactory.IsAvailable;

    /// <summary>
    /// The transport of options that name none: libuv when it loads, sockets (logged) otherwise. io_uring is taken only when
    /// named: measured against libuv it did not cost less per request in every shape (docs/benchmarks.md).
    /// </summary>
    public static TransportKind ChooseDefault(bool libuvAvailable, ILogger logger)
    {
        // libuv serves a request with the least CPU (docs/benchmarks.md); sockets needs nothing beyond .NET.
        if (libuvAvailable)
        {
            return TransportKind.Libuv;
        }

        ServerLog.LibuvUnavailable(logger, LibuvTransportFactory.PackageName);
        return TransportKind.Sockets;
    }
}
