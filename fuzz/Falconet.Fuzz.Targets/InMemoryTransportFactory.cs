using System;
using System.Buffers;
using System.Collections.Generic;
using System.Net;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;
using Falconet.Buffers;
using Falconet.Transport;

namespace Falconet.Fuzz;

/// <summary>
/// A transport whose connections are scripts of received pieces in memory: a server bound through it runs each
/// connection to its end on the thread that offers it, so a fuzzer gets one deterministic run per input.
/// </summary>
public sealed class InMemoryTransportFactory : ITransportFactory
{
    private Listener? _listener;

    /// <summary>Creates the transport with one pool that no thread owns, tracking who rented each block when asked.</summary>
    public InMemoryTransportFactory(bool trackLeaks)
    {
        Pool = new SlabMemoryPool("in-memory", trackLeaks, SlabMemoryPool.NoOwnerThread);
    }

    /// <summary>The pool every connection rents from.</summary>
    public SlabMemoryPool Pool { get; }

    /// <inheritdoc/>
    public IReadOnlyList<SlabMemoryPool> Pools => [Pool];

    /// <summary>True while the server's accept loop waits for a connection (it then runs the next one inline).</summary>
    public bool IsAccepting => _listener is { IsWaiting: true };

    /// <inheritdoc/>
    public ValueTask<IConnectionListener> BindAsync(EndPoint endpoint, CancellationToken ct = default)
    {
        if (_listener is not null)
        {
            throw new InvalidOperationException("The in-memory transport serves one listener.");
        }

        _listener = new Listener(endpoint);
        return new ValueTask<IConnectionListener>(_listener);
    }

    /// <summary>Hands the server a connection that receives <paramref name="pieces"/> one per receive, then the end of the stream.</summary>
    /// <remarks>Call it only while <see cref="IsAccepting"/>; the connection has usually ended when it returns.</remarks>
    public InMemoryConnection Connect(IReadOnlyList<ReadOnlyMemory<byte>> pieces)
    {
        var connection = new InMemoryConnection(Pool, pieces);
        Connect(connection);
        return connection;
    }

    /// <summary>Hands the server <paramref name="connection"/> (its pool must be <see cref="Pool"/>); call it only while <see cref="IsAccepting"/>.</summary>
    public void Connect(TransportConnection connection)
    {
        Listener listener = _listener ?? throw new InvalidOperationException("Bind the transport first.");
        listener.Offer(connection);
    }

    /// <summary>The server's only listener. Completing an accept runs the waiting accept loop on the caller's thread.</summary>
    private sealed class Listener(EndPoint endPoint) : IConnectionListener, IValueTaskSource<TransportConnection?>
    {
        private ManualResetValueTaskSourceCore<TransportConnection?> _accept = new() { RunContinuationsAsynchronously = false };
        private volatile bool _waiting;
        private bool _pending;
        private bool _unbound;

        public EndPoint EndPoint => endPoint;

        public bool IsWaiting => _waiting;

        public ValueTask<TransportConnection?> AcceptAsync(CancellationToken ct = default)
        {
            if (_unbound)
            {
                return new ValueTask<TransportConnection?>((TransportConnection?)null);
            }

            _accept.Reset();
            _pending = true;
            return new ValueTask<TransportConnection?>(this, _accept.Version);
        }

        public void Offer(TransportConnection? connection)
        {
            if (!_pending)
            {
                throw new InvalidOperationException("The server is not accepting.");
            }

            _pending = false;
            _waiting = false;
            _accept.SetResult(connection);
        }

        public ValueTask UnbindAsync()
        {
            _unbound = true;
            if (_pending)
            {
                Offer(null);
            }

            return default;
        }

        public ValueTask DisposeAsync() => UnbindAsync();

        public TransportConnection? GetResult(short token) => _accept.GetResult(token);

        public ValueTaskSourceStatus GetStatus(short token) => _accept.GetStatus(token);

        public void OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
        {
            _accept.OnCompleted(continuation, state, token, flags);
            _waiting = true;
        }
    }
}

/// <summary>One scripted connection: each receive takes the next piece (or what fits of it), then 0; every send is kept.</summary>
public sealed class InMemoryConnection : TransportConnection
{
    private static readonly IPEndPoint s_endPoint = new(IPAddress.Loopback, 0);

    private readonly SlabMemoryPool _pool;
    private readonly IReadOnlyList<ReadOnlyMemory<byte>> _pieces;
    private readonly ArrayBufferWriter<byte> _sent = new();
    private int _piece;
    private int _offset;
    private bool _receivingStopped;

    internal InMemoryConnection(SlabMemoryPool pool, IReadOnlyList<ReadOnlyMemory<byte>> pieces)
    {
        _pool = pool;
        _pieces = pieces;
    }

    /// <summary>Every byte the server sent, in order.</summary>
    public ReadOnlyMemory<byte> Sent => _sent.WrittenMemory;

    /// <summary>True once the server shut down its sending side (FIN).</summary>
    public bool SendShutDown { get; private set; }

    /// <summary>True when the server tried to send after shutting down its sending side or after closing.</summary>
    public bool SentAfterClose { get; private set; }

    /// <summary>True when the server closed with a reset instead of gracefully.</summary>
    public bool Aborted { get; private set; }

    /// <summary>True once the server disposed the connection.</summary>
    public bool Disposed { get; private set; }

    /// <inheritdoc/>
    public override EndPoint? LocalEndPoint => s_endPoint;

    /// <inheritdoc/>
    public override EndPoint? RemoteEndPoint => s_endPoint;

    /// <inheritdoc/>
    public override SlabMemoryPool Pool => _pool;

    /// <inheritdoc/>
    public override ValueTask<int> ReceiveAsync(Memory<byte> buffer, CancellationToken ct = default)
    {
        while (!_receivingStopped && !Aborted && _piece < _pieces.Count)
        {
            ReadOnlyMemory<byte> piece = _pieces[_piece][_offset..];
            if (piece.IsEmpty)
            {
                _piece++;
                _offset = 0;
                continue;
            }

            int count = Math.Min(piece.Length, buffer.Length);
            piece[..count].CopyTo(buffer);
            _offset += count;
            return new ValueTask<int>(count);
        }

        return new ValueTask<int>(0);
    }

    /// <inheritdoc/>
    public override ValueTask SendAsync(ReadOnlySequence<byte> buffers, CancellationToken ct = default)
    {
        if (SendShutDown || Disposed || Aborted)
        {
            SentAfterClose = true;
            return ValueTask.FromException(new ConnectionAbortedException("The connection was closed before this send."));
        }

        foreach (ReadOnlyMemory<byte> segment in buffers)
        {
            _sent.Write(segment.Span);
        }

        return default;
    }

    /// <inheritdoc/>
    public override void Schedule(IThreadPoolWorkItem workItem) => workItem.Execute();

    /// <inheritdoc/>
    public override void StopReceiving() => _receivingStopped = true;

    /// <inheritdoc/>
    public override void ShutdownSend() => SendShutDown = true;

    /// <inheritdoc/>
    public override void Abort() => Aborted = true;

    /// <inheritdoc/>
    public override ValueTask DisposeAsync()
    {
        Disposed = true;
        return default;
    }
}
