using System;
using System.Buffers;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Buffers;
using Falconet.Transport;
using Falconet.Transport.Sockets;

namespace Falconet.Http.Tests.Infrastructure;

/// <summary>
/// A built-in transport seen through the transport contract, with hooks for tests: it can hand out each accepted
/// connection only once the client's first bytes have arrived (sockets), and report when a receive that had to wait
/// completes (before the HTTP layer sees the result).
/// </summary>
internal sealed class InterceptingTransportFactory : ITransportFactory, IAsyncDisposable
{
    public InterceptingTransportFactory(int ioThreads = 2, IoScheduling scheduling = IoScheduling.ThreadPool)
        : this(new SocketTransportFactory(new SocketTransportOptions { IoThreadCount = ioThreads, TrackLeaks = true, Scheduling = scheduling }))
    {
    }

    /// <summary>Wraps <paramref name="inner"/>, which the intercepting factory then owns and disposes.</summary>
    public InterceptingTransportFactory(ITransportFactory inner)
    {
        Inner = inner;
    }

    public ITransportFactory Inner { get; }

    /// <summary>Accept returns a connection only once its first bytes are readable, so the first receive completes at once.</summary>
    public bool AcceptOnceReadable { get; init; }

    /// <summary>How many accepts fail first as they do when the process is out of file descriptors (EMFILE).</summary>
    public int FailingAccepts { get; init; }

    /// <summary>Called on the thread that completes a receive that was pending, before its result goes on.</summary>
    public Action<TransportConnection>? PendingReceiveCompleted { get; init; }

    public bool Disposed { get; private set; }

    public IReadOnlyList<SlabMemoryPool> Pools => Inner.Pools;

    public long RefusedConnections => Inner.RefusedConnections;

    public async ValueTask<IConnectionListener> BindAsync(EndPoint endpoint, CancellationToken ct = default)
        => new Listener(this, await Inner.BindAsync(endpoint, ct));

    public async ValueTask DisposeAsync()
    {
        Disposed = true;
        await ((IAsyncDisposable)Inner).DisposeAsync();
    }

    private sealed class Listener(InterceptingTransportFactory owner, IConnectionListener inner) : IConnectionListener
    {
        private int _failuresLeft = owner.FailingAccepts;

        public EndPoint EndPoint => inner.EndPoint;

        public async ValueTask<TransportConnection?> AcceptAsync(CancellationToken ct = default)
        {
            if (Interlocked.Decrement(ref _failuresLeft) >= 0)
            {
                throw new SocketException((int)SocketError.TooManyOpenSockets);
            }

            TransportConnection? connection = await inner.AcceptAsync(ct);
            if (connection is null)
            {
                return null;
            }

            if (owner.AcceptOnceReadable)
            {
                // Like TCP_DEFER_ACCEPT: the request is already there when the server first receives.
                ((SocketConnection)connection).Socket.Poll(TestTimeouts.Operation, SelectMode.SelectRead);
            }

            return owner.PendingReceiveCompleted is { } callback ? new CountingConnection(connection, callback) : connection;
        }

        public ValueTask UnbindAsync() => inner.UnbindAsync();

        public ValueTask DisposeAsync() => inner.DisposeAsync();
    }
}
