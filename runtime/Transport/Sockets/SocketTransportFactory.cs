using System;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Buffers;

namespace Falconet.Transport.Sockets;

/// <summary>The System.Net.Sockets transport: TCP listeners whose connections are spread round robin over memory pools, and with <see cref="IoScheduling.IoThreads"/> over I/O threads that own them.</summary>
/// <remarks>
/// Dispose the factory after every listener is unbound and every connection disposed: it stops the I/O threads
/// and disposes the pools (renting then throws; blocks still out may be returned and waited for).
/// </remarks>
public sealed class SocketTransportFactory : ITransportFactory, IAsyncDisposable, IDisposable
{
    /// <summary>How long disposal waits, in total, for lane threads to finish what they run (a lane blocked by a handler is left behind).</summary>
    internal static readonly TimeSpan LaneStopTimeout = TimeSpan.FromSeconds(1);

    private readonly IoLane[] _lanes;
    private readonly SlabMemoryPool[] _pools;
    private int _next = -1;
    private volatile bool _disposed;

    /// <summary>Creates the factory, its pools and, with <see cref="IoScheduling.IoThreads"/>, its I/O threads.</summary>
    public SocketTransportFactory(SocketTransportOptions? options = null)
    {
        Options = options ?? new SocketTransportOptions();
        ArgumentOutOfRangeException.ThrowIfLessThan(Options.IoThreadCount, 1, nameof(options));
        ArgumentOutOfRangeException.ThrowIfLessThan(Options.Backlog, 1, nameof(options));
        if (!Enum.IsDefined(Options.Scheduling))
        {
            throw new ArgumentOutOfRangeException(nameof(options), Options.Scheduling, "Unknown scheduling.");
        }

        _pools = new SlabMemoryPool[Options.IoThreadCount];
        if (Options.Scheduling == IoScheduling.IoThreads)
        {
            _lanes = new IoLane[_pools.Length];
            for (int i = 0; i < _lanes.Length; i++)
            {
                _lanes[i] = new IoLane(i, Options.TrackLeaks);
                _pools[i] = _lanes[i].Pool;
            }
        }
        else
        {
            // Code of a connection runs on whichever thread completed its operation: no thread owns these pools,
            // they are shards that spread the shared-path traffic.
            _lanes = Array.Empty<IoLane>();
            for (int i = 0; i < _pools.Length; i++)
            {
                _pools[i] = new SlabMemoryPool($"sockets-{i}", Options.TrackLeaks, SlabMemoryPool.NoOwnerThread);
            }
        }
    }

    /// <summary>The settings the factory was created with.</summary>
    public SocketTransportOptions Options { get; }

    /// <summary>Every pool of the transport, for diagnostics (for example waiting until every block is back).</summary>
    public IReadOnlyList<SlabMemoryPool> Pools => _pools;

    /// <summary>
    /// True unless completions run where the socket engine sees them: with <see cref="IoScheduling.ThreadPool"/> .NET's
    /// engine thread hands each one to a thread-pool thread, and <see cref="IoScheduling.IoThreads"/> hands it on to an
    /// I/O thread; only thread-pool scheduling in a process run with DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS=1 hands
    /// nothing over.
    /// </summary>
    public bool HandsOffCompletions => Options.Scheduling == IoScheduling.IoThreads || !InlineCompletions;

    /// <summary>Whether .NET's socket engine runs completions on its own thread in this process (read once, as .NET does).</summary>
    internal static bool InlineCompletions { get; } = Environment.GetEnvironmentVariable("DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS") == "1";

    /// <summary>
    /// Listens on <paramref name="endpoint"/>: an <see cref="IPEndPoint"/> (port 0 picks a free port; IPv6Any also accepts
    /// IPv4; with <see cref="SocketTransportOptions.ReusePort"/> bound with SO_REUSEPORT), a
    /// <see cref="UnixDomainSocketEndPoint"/> (the path must not exist: the server removes a stale socket file first), or a
    /// <see cref="ListenSocketEndPoint"/>, a socket already listening, adopted as it is.
    /// </summary>
    public ValueTask<IConnectionListener> BindAsync(EndPoint endpoint, CancellationToken ct = default)
    {
        ArgumentNullException.ThrowIfNull(endpoint);
        ct.ThrowIfCancellationRequested();
        ObjectDisposedException.ThrowIf(_disposed, this);
        if (endpoint is not IPEndPoint ip)
        {
            if (endpoint is not (UnixDomainSocketEndPoint or ListenSocketEndPoint))
            {
                throw new NotSupportedException($"The sockets transport listens on IP and Unix domain socket endpoints or adopts a listening socket, not {endpoint.GetType().Name}.");
            }

            // Bound outside System.Net.Sockets, which would delete a Unix socket's file when it closes it: the server
            // decides about the file (docs/deployment.md).
            int fd = ListenSockets.Open(endpoint, Options.Backlog, out _);
            return new ValueTask<IConnectionListener>(new SocketConnectionListener(this, new Socket(new SafeSocketHandle(fd, ownsHandle: true))));
        }

        var socket = new Socket(ip.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        try
        {
            if (ip.Address.Equals(IPAddress.IPv6Any))
            {
                socket.DualMode = true;
            }

            if (Options.ReusePort)
            {
                ListenSockets.SetReusePort(socket.Handle);
            }

            socket.Bind(ip);
            socket.Listen(Options.Backlog);
        }
        catch
        {
            socket.Dispose();
            throw;
        }

        return new ValueTask<IConnectionListener>(new SocketConnectionListener(this, socket));
    }

    internal TransportConnection CreateConnection(Socket accepted)
    {
        if (Options.NoDelay && accepted.AddressFamily != AddressFamily.Unix)
        {
            accepted.NoDelay = true;
        }

        uint next = (uint)Interlocked.Increment(ref _next) % (uint)_pools.Length;
        return _lanes.Length == 0
            ? new SocketConnection(accepted, null, _pools[next])
            : new SocketConnection(accepted, _lanes[next], _lanes[next].Pool);
    }

    /// <summary>Stops the I/O threads and disposes the pools.</summary>
    public void Dispose()
    {
        if (_disposed)
        {
            return;
        }

        _disposed = true;
        if (_lanes.Length == 0)
        {
            foreach (SlabMemoryPool pool in _pools)
            {
                pool.Dispose();
            }

            return;
        }

        // Every lane is told first, so blocked lanes share one bounded wait instead of one each.
        foreach (IoLane lane in _lanes)
        {
            lane.BeginStop();
        }

        long deadline = Environment.TickCount64 + (long)LaneStopTimeout.TotalMilliseconds;
        foreach (IoLane lane in _lanes)
        {
            lane.Stop(TimeSpan.FromMilliseconds(Math.Max(0, deadline - Environment.TickCount64)));
        }
    }

    /// <summary>Stops the I/O threads and disposes the pools.</summary>
    public ValueTask DisposeAsync()
    {
        Dispose();
        return default;
    }
}
