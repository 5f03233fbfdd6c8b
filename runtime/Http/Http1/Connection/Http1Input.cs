using System;
using System.Buffers;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Buffers;
using Falconet.Transport;

namespace Falconet.Http.Http1;

/// <summary>
/// The bytes a connection has received and not yet consumed: the transport receives straight into the free
/// space of the tail block, so requests and bodies that span reads span blocks without a copy.
/// </summary>
internal sealed class Http1Input : IDisposable
{
    // Who owns the connection's one receive: nobody, a reader of the input, or the disconnect watch.
    private const int SlotIdle = 0;
    private const int SlotReader = 1;
    private const int SlotWatch = 2;

    private readonly TransportConnection _transport;
    private readonly BlockChain _chain;
    private readonly RequestAbortSignal _abortSignal;
    private readonly DisconnectWatch _watch;
    private int _slot;
    private bool _readerTookWatch;

    // The pending BeginReceive is a wait for data (nothing received yet); the last one was, and the next is its receive.
    private bool _waiting;
    private bool _waited;

    public Http1Input(TransportConnection transport, RequestAbortSignal abortSignal)
    {
        _transport = transport;
        _chain = new BlockChain(transport.Pool);
        _abortSignal = abortSignal;
        _watch = new DisconnectWatch(transport, abortSignal);
    }

    /// <summary>Received bytes not yet consumed.</summary>
    public long Buffered => _chain.Length;

    /// <summary>True once the peer closed its sending side.</summary>
    public bool PeerClosed { get; private set; }

    public ReadOnlySequence<byte> GetSequence() => _chain.GetSequence();

    public void Consume(SequencePosition consumedTo) => _chain.Consume(consumedTo);

    /// <summary>The unconsumed bytes as one span when they lie in one block; false otherwise (then read <see cref="GetSequence"/>).</summary>
    public bool TryGetSingleSpan(out ReadOnlySpan<byte> span) => _chain.TryGetSingleSpan(out span);

    /// <summary>Consumes the first <paramref name="count"/> bytes of the span <see cref="TryGetSingleSpan"/> gave.</summary>
    public void ConsumeSingle(int count) => _chain.ConsumeSingle(count);

    /// <summary>Receives once into the tail block; returns the byte count, 0 when the peer closed.</summary>
    public ValueTask<int> ReceiveAsync(CancellationToken cancellationToken = default)
    {
        ValueTask<int> receive = BeginReceive(cancellationToken);
        if (receive.IsCompletedSuccessfully && TryEndReceive(receive.Result, out int received))
        {
            return new ValueTask<int>(received);
        }

        return AwaitReceiveAsync(receive, cancellationToken);
    }

    /// <summary>
    /// Starts a receive into the tail block's free space, or, when nothing unread is buffered and the transport can, a wait
    /// for data that holds no block (<see cref="TransportConnection.WaitForDataAsync"/>): an idle keep-alive connection then
    /// costs no pool block. The caller awaits it and passes the result to <see cref="TryEndReceive"/>, which says false after
    /// a wait: then it calls this again, and the receive normally completes at once. The connection loop uses this pair so
    /// that it awaits the transport directly.
    /// </summary>
    public ValueTask<int> BeginReceive(CancellationToken cancellationToken)
    {
        if (PeerClosed)
        {
            return new ValueTask<int>(0);
        }

        int slot = Interlocked.CompareExchange(ref _slot, SlotReader, SlotIdle);
        if (slot == SlotReader)
        {
            throw new InvalidOperationException("A receive is already pending on this connection.");
        }

        if (slot == SlotWatch)
        {
            // The disconnect watch's receive is in flight (or done): take over its outcome instead of starting another.
            Volatile.Write(ref _slot, SlotReader);
            _readerTookWatch = true;
            return cancellationToken.CanBeCanceled ? TakeWatchAsync(cancellationToken) : _watch.Take();
        }

        if (_waited)
        {
            // A wait for data just ended: receive what it found.
            _waited = false;
        }
        else if (_chain.IsEmpty && _transport.CanWaitForData)
        {
            // Nothing unread: the block goes back to the pool while the peer is quiet, and one is taken again once bytes
            // are at hand.
            _chain.Dispose();
            ValueTask<int> wait = _transport.WaitForDataAsync(cancellationToken);
            if (!wait.IsCompletedSuccessfully)
            {
                _waiting = true;
                return wait;
            }
        }

        Memory<byte> free = _chain.GetWritableMemory(SlabMemoryPool.BlockSize / 2);
        return _transport.ReceiveAsync(free, cancellationToken);
    }

    /// <summary>
    /// Ends what <see cref="BeginReceive"/> started: false after a wait for data (call <see cref="BeginReceive"/> again);
    /// otherwise commits the bytes the receive wrote into the tail block, 0 marking the peer as closed.
    /// </summary>
    public bool TryEndReceive(int result, out int received)
    {
        if (_waiting)
        {
            _waiting = false;
            _waited = true;
            Volatile.Write(ref _slot, SlotIdle);
            received = 0;
            return false;
        }

        received = EndReceive(result);
        return true;
    }

    private int EndReceive(int received)
    {
        if (_readerTookWatch)
        {
            _readerTookWatch = false;
            AppendWatchBlock(received);
        }
        else if (received != 0)
        {
            _chain.Advance(received);
        }

        if (received == 0)
        {
            PeerClosed = true;
            _abortSignal.Abort();
        }

        Volatile.Write(ref _slot, SlotIdle);
        return received;
    }

    /// <summary>
    /// Called when a handler goes asynchronous: starts a receive that notices a client going away while the handler
    /// runs (see <see cref="DisconnectWatch"/>), unless a receive is already in flight or the peer has closed.
    /// </summary>
    public void WatchForDisconnect()
    {
        if (!PeerClosed && Interlocked.CompareExchange(ref _slot, SlotWatch, SlotIdle) == SlotIdle)
        {
            _watch.Arm();
        }
    }

    /// <summary>
    /// At teardown, after the transport was closed: waits for a watch receive nobody took over to complete and
    /// returns its block, so no receive writes into a block that went back to the pool.
    /// </summary>
    public async ValueTask AbandonWatchAsync()
    {
        if (Volatile.Read(ref _slot) == SlotWatch)
        {
            try
            {
                await _watch.Take().ConfigureAwait(false);
            }
            catch (Exception)
            {
                // The connection is closing: how the receive ended no longer matters.
            }
        }

        // Also a receive a reader took over and never finished (it failed): the transport is closed, so it is complete.
        if (_watch.ReleaseBlock() is { } block)
        {
            _transport.Pool.Return(block);
        }

        Volatile.Write(ref _slot, SlotIdle);
    }

    private void AppendWatchBlock(int received)
    {
        MemoryBlock block = _watch.ReleaseBlock()!;
        if (received == 0)
        {
            _transport.Pool.Return(block);
            return;
        }

        // An empty chain holds at most an empty tail block: return it, so the sequence starts at the received bytes.
        if (_chain.Length == 0)
        {
            _chain.Dispose();
        }

        block.Start = 0;
        block.End = received;
        _chain.Append(block);
    }

    private async ValueTask<int> TakeWatchAsync(CancellationToken cancellationToken)
    {
        // As for a transport receive, cancelling a pending receive aborts the connection.
        using (cancellationToken.UnsafeRegister(static state => ((TransportConnection)state!).Abort(), _transport))
        {
            int received = await _watch.Take().ConfigureAwait(false);
            if (cancellationToken.IsCancellationRequested)
            {
                // Keep what arrived (and the block) with the input before failing the read.
                EndReceive(received);
                cancellationToken.ThrowIfCancellationRequested();
            }

            return received;
        }
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<int> AwaitReceiveAsync(ValueTask<int> receive, CancellationToken cancellationToken)
    {
        while (true)
        {
            int result;
            try
            {
                result = await receive.ConfigureAwait(false);
            }
            catch (ConnectionResetException)
            {
                _abortSignal.Abort();
                throw;
            }

            if (TryEndReceive(result, out int received))
            {
                return received;
            }

            receive = BeginReceive(cancellationToken);
        }
    }

    public void Dispose() => _chain.Dispose();
}
