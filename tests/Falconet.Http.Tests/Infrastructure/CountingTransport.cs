using System;
using System.Buffers;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Linq;
using System.Net;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Buffers;
using Falconet.Server;
using Falconet.Transport;
using Falconet.Transport.IoUring;
using Falconet.Transport.Libuv;
using Falconet.Transport.Sockets;
using Falconet.Transport.Tls;

namespace Falconet.Http.Tests.Infrastructure;

/// <summary>
/// Any transport seen through the transport contract, each accepted connection wrapped in a <see cref="CountingConnection"/>
/// (public API only, so the ASP.NET Core tests use it too). The factory owns and disposes the transport it wraps.
/// </summary>
internal sealed class CountingTransportFactory(ITransportFactory inner) : ITransportFactory, IAsyncDisposable
{
    private readonly ConcurrentQueue<CountingConnection> _connections = new();

    /// <summary>Counts the connections of a built-in transport (one loop or the default thread-pool scheduling), with leak tracking.</summary>
    public static CountingTransportFactory Over(TransportKind kind) => new(kind switch
    {
        TransportKind.Libuv => new LibuvTransportFactory(new LibuvTransportOptions { LoopCount = 1, TrackLeaks = true }),
        TransportKind.IoUring => new IoUringTransportFactory(new IoUringTransportOptions { LoopCount = 1, TrackLeaks = true }),
        _ => new SocketTransportFactory(new SocketTransportOptions { TrackLeaks = true }),
    });

    /// <summary>Every connection accepted so far, in order.</summary>
    public IReadOnlyList<CountingConnection> Connections => _connections.ToArray();

    public IReadOnlyList<SlabMemoryPool> Pools => inner.Pools;

    public long RefusedConnections => inner.RefusedConnections;

    public async ValueTask<IConnectionListener> BindAsync(EndPoint endpoint, CancellationToken ct = default)
        => new Listener(this, await inner.BindAsync(endpoint, ct));

    public ValueTask DisposeAsync() => ((IAsyncDisposable)inner).DisposeAsync();

    private sealed class Listener(CountingTransportFactory owner, IConnectionListener listener) : IConnectionListener
    {
        public EndPoint EndPoint => listener.EndPoint;

        public async ValueTask<TransportConnection?> AcceptAsync(CancellationToken ct = default)
        {
            TransportConnection? connection = await listener.AcceptAsync(ct);
            if (connection is null)
            {
                return null;
            }

            var counting = new CountingConnection(connection);
            owner._connections.Enqueue(counting);
            return counting;
        }

        public ValueTask UnbindAsync() => listener.UnbindAsync();

        public ValueTask DisposeAsync() => listener.DisposeAsync();
    }
}

/// <summary>
/// Passes everything through to the connection it wraps, counting the sends that reach the transport (and their shape) and
/// the receives that brought bytes; optionally reports, on the completing thread, when a receive that had to wait completes.
/// </summary>
internal sealed class CountingConnection(TransportConnection inner, Action<TransportConnection>? pendingReceiveCompleted = null) : TransportConnection
{
    private int _sends;
    private int _dataReceives;
    private long _largestSend;
    private int _mostSegments;

    /// <summary>Calls of <see cref="SendAsync"/>: each is one gathered write to the socket.</summary>
    public int Sends => Volatile.Read(ref _sends);

    /// <summary>Receives that returned at least one byte: the read batches the connection saw.</summary>
    public int DataReceives => Volatile.Read(ref _dataReceives);

    public long LargestSend => Interlocked.Read(ref _largestSend);

    public int MostSegments => Volatile.Read(ref _mostSegments);

    public override EndPoint? LocalEndPoint => inner.LocalEndPoint;

    public override EndPoint? RemoteEndPoint => inner.RemoteEndPoint;

    public override SlabMemoryPool Pool => inner.Pool;

    public override bool IsOnIoThread => inner.IsOnIoThread;

    public override bool CompletesOnThreadPool => inner.CompletesOnThreadPool;

    public override int MaxGatheredSegments => inner.MaxGatheredSegments;

    public override TlsConnectionInfo? TlsInfo => inner.TlsInfo;

    public override ValueTask<int> ReceiveAsync(Memory<byte> buffer, CancellationToken ct = default)
    {
        ValueTask<int> receive = inner.ReceiveAsync(buffer, ct);
        if (!receive.IsCompletedSuccessfully)
        {
            return receive.IsCompleted ? receive : AwaitReceiveAsync(receive);
        }

        int received = receive.Result;
        CountReceive(received);
        return new ValueTask<int>(received);
    }

    public override ValueTask SendAsync(ReadOnlySequence<byte> buffers, CancellationToken ct = default)
    {
        Interlocked.Increment(ref _sends);
        int segments = 0;
        foreach (ReadOnlyMemory<byte> segment in buffers)
        {
            segments += segment.IsEmpty ? 0 : 1;
        }

        Max(ref _largestSend, buffers.Length);
        Max(ref _mostSegments, segments);
        return inner.SendAsync(buffers, ct);
    }

    public override void Schedule(IThreadPoolWorkItem workItem) => inner.Schedule(workItem);

    public override void StopReceiving() => inner.StopReceiving();

    public override void ShutdownSend() => inner.ShutdownSend();

    public override void Abort() => inner.Abort();

    public override ValueTask DisposeAsync() => inner.DisposeAsync();

    private async ValueTask<int> AwaitReceiveAsync(ValueTask<int> receive)
    {
        try
        {
            int received = await receive.ConfigureAwait(false);
            CountReceive(received);
            return received;
        }
        finally
        {
            pendingReceiveCompleted?.Invoke(this);
        }
    }

    private void CountReceive(int received)
    {
        if (received > 0)
        {
            Interlocked.Increment(ref _dataReceives);
        }
    }

    private static void Max(ref long target, long value)
    {
        long current;
        while (value > (current = Interlocked.Read(ref target)) && Interlocked.CompareExchange(ref target, value, current) != current)
        {
        }
    }

    private static void Max(ref int target, int value)
    {
        int current;
        while (value > (current = Volatile.Read(ref target)) && Interlocked.CompareExchange(ref target, value, current) != current)
        {
        }
    }
}
