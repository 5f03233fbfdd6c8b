using System;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Diagnostics;

namespace Falconet.Transport.IoUring;

/// <summary>
/// A bound endpoint of the io_uring transport: for an IP endpoint one listening socket per loop, bound to the same port
/// with SO_REUSEPORT so the kernel spreads connections over the loops; for a Unix domain socket or an adopted socket one
/// socket, a duplicate of its descriptor on every loop, all accepting from its one queue. Each loop accepts with a
/// multishot accept on its own ring.
/// </summary>
/// <remarks>
/// Accepted connections are made on their loop and queued for <see cref="AcceptAsync"/>; the server then schedules each
/// back onto its loop, where it stays. Connections still queued when the listener is unbound are handed out all the same;
/// one never taken is reset when the listener is disposed.
/// </remarks>
internal sealed class IoUringConnectionListener : IConnectionListener
{
    private readonly AcceptQueue _accepted = new();

    private readonly IoUringTransportFactory _factory;
    private IoUringAcceptor[] _acceptors = [];
    private int _unbound;

    public IoUringConnectionListener(IoUringTransportFactory factory, EndPoint endpoint)
    {
        _factory = factory;
        EndPoint = endpoint;
    }

    public EndPoint EndPoint { get; private set; }

    internal IoScheduling Scheduling => _factory.Options.Scheduling;

    /// <summary>True when the transport has <see cref="IoUringTransportOptions.MaxConnections"/> open: the next accepted is reset.</summary>
    internal bool IsFull => _factory.OpenConnections >= _factory.Options.MaxConnections;

    /// <summary>Opens the listening sockets and starts an acceptor on every loop; port 0 is resolved by the first and reused by the others.</summary>
    public async Task BindAsync(EndPoint endpoint)
    {
        IoUringLoop[] loops = _factory.Loops;
        var acceptors = new IoUringAcceptor[loops.Length];
        int started = 0;
        int descriptor = -1;
        try
        {
            EndPoint bound = endpoint;
            UnixDomainSocketEndPoint? unix = null;
            if (endpoint is not IPEndPoint)
            {
                descriptor = ListenSockets.Open(endpoint, _factory.Options.Backlog, out bound);
                unix = bound as UnixDomainSocketEndPoint;
                if (unix is null && _factory.Options.NoDelay)
                {
                    // An adopted TCP socket: its connections inherit TCP_NODELAY from it, as from the transport's own.
                    IoUringNative.SetNoDelay(descriptor);
                }
            }

            for (int i = 0; i < loops.Length; i++)
            {
                if (descriptor >= 0)
                {
                    acceptors[i] = new IoUringAcceptor(this, loops[i], ListenSockets.Duplicate(descriptor), unix);
                }
                else
                {
                    Socket socket = Listen(bound, _factory.Options.ReusePort || loops.Length > 1);
                    bound = socket.LocalEndPoint ?? bound;
                    acceptors[i] = new IoUringAcceptor(this, loops[i], socket);
                }

                try
                {
                    await acceptors[i].StartAsync().ConfigureAwait(false);
                }
                catch
                {
                    acceptors[i].CloseUnstarted();
                    throw;
                }

                started++;
            }

            EndPoint = bound;
            _acceptors = acceptors;
        }
        catch
        {
            for (int i = 0; i < started; i++)
            {
                await acceptors[i].CloseAsync().ConfigureAwait(false);
            }

            throw;
        }
        finally
        {
            // Every loop holds its own duplicate.
            ListenSockets.CloseDescriptor(descriptor);
        }
    }

    public ValueTask<TransportConnection?> AcceptAsync(CancellationToken ct = default) => _accepted.AcceptAsync(ct);

    /// <summary>
    /// Stops accepting and closes the listening sockets; connections the loops accepted before are still handed out by
    /// <see cref="AcceptAsync"/> (their clients connected and may have sent a request), then it returns null.
    /// </summary>
    public async ValueTask UnbindAsync()
    {
        if (Interlocked.Exchange(ref _unbound, 1) != 0)
        {
            return;
        }

        foreach (IoUringAcceptor acceptor in _acceptors)
        {
            await acceptor.CloseAsync().ConfigureAwait(false);
        }

        _accepted.Complete();
    }

    public async ValueTask DisposeAsync()
    {
        await UnbindAsync().ConfigureAwait(false);

        // Accepted but never taken: nobody else will close them.
        await _accepted.CloseAsync().ConfigureAwait(false);
    }

    /// <summary>Counts a connection reset at accept.</summary>
    internal void CountRefused()
    {
        _factory.CountRefused();
        ServerMetrics.Count(ServerMetrics.RejectedConnections, ServerMetrics.ConnectionLimitReason);
    }

    /// <summary>Queues a connection made on its loop thread for <see cref="AcceptAsync"/>; resets it when the listener is unbound.</summary>
    internal void OnAccepted(IoUringConnection connection) => _accepted.Add(connection);

    /// <summary>A bound, listening, non-blocking socket; accepted connections inherit TCP_NODELAY from it.</summary>
    private Socket Listen(EndPoint endpoint, bool reusePort)
    {
        var socket = new Socket(endpoint.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        try
        {
            if (endpoint is IPEndPoint ip && ip.Address.Equals(IPAddress.IPv6Any))
            {
                socket.DualMode = true;
            }

            if (reusePort)
            {
                ListenSockets.SetReusePort(socket.Handle);
            }

            if (_factory.Options.NoDelay)
            {
                socket.NoDelay = true;
            }

            socket.Bind(endpoint);
            socket.Listen(_factory.Options.Backlog);
            socket.Blocking = false;
            return socket;
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }
}
