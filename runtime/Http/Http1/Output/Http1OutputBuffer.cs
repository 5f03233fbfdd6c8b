using System;
using System.Buffers;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;
using Falconet.Buffers;
using Falconet.Transport;

namespace Falconet.Http.Http1;

/// <summary>
/// The bytes a connection has produced but not yet sent: responses of a pipelined batch, written into pool
/// blocks and sent with one gathered call. The write-behind bound lives here: <see cref="IsOverLimit"/> tells
/// a writer that it must wait for the socket before producing more. An application's flush made while its handler
/// runs synchronously is held for the send after the handler (Http1OutputBuffer.Holding.cs).
/// </summary>
internal sealed partial class Http1OutputBuffer : IDisposable, IValueTaskSource
{
    private readonly TransportConnection _transport;
    private readonly BlockChain _chain;
    private readonly long _limit;
    private readonly BlockChainWriter _writer;
    private readonly DataRateMonitor? _rates;

    // A flush whose send went pending completes through this one reusable source, continued inline from the send's own
    // completion: an async method here would cost a state machine box per pending send (measured 112 B per request on
    // libuv with thread-pool scheduling, where every send is posted to the loop).
    private ManualResetValueTaskSourceCore<bool> _flush;
    private ValueTask _pendingSend;
    private SequencePosition _pendingEnd;
    private Action? _onSendCompleted;

    public Http1OutputBuffer(TransportConnection transport, long limit, DataRateMonitor? rates = null)
    {
        _transport = transport;
        MinLastWriteFromCallerMemory = transport.MinLastWriteFromCallerMemory;
        _chain = new BlockChain(transport.Pool);
        _limit = limit;
        _writer = new BlockChainWriter(_chain);
        _rates = rates;
    }

    /// <summary>Bytes buffered and not yet handed to the transport.</summary>
    public long Buffered => _chain.Length;

    /// <summary>The most bytes this buffer ever held at once (a diagnostic for the write-behind bound).</summary>
    public long PeakBuffered { get; private set; }

    /// <summary>The write-behind bound: at or above it a writer waits for <see cref="FlushAsync"/>.</summary>
    public long Limit => _limit;

    public bool IsOverLimit => _chain.Length >= _limit;

    /// <summary>The buffer writer over the output blocks (the same object for the life of the connection).</summary>
    public BlockChainWriter Writer => _writer;

    public void Write(ReadOnlySpan<byte> data)
    {
        _writer.Write(data);
        TrackPeak();
    }

    /// <summary>Appends every byte buffered in <paramref name="source"/> and consumes it from there.</summary>
    public void WriteFrom(BlockChain source)
    {
        if (source.Length == 0)
        {
            return;
        }

        for (MemoryBlock? block = source.Head; block is not null; block = block.NextBlock)
        {
            _writer.Write(block.DataSpan);
        }

        source.ConsumeAll();
        TrackPeak();
    }

    /// <summary>
    /// Drops what was written after <see cref="Buffered"/> was <paramref name="length"/> (bytes that must not be
    /// sent, such as a response head that failed halfway); the bytes before it, which a send may hold, stay.
    /// </summary>
    public void RollBackTo(long length)
    {
        _writer.DiscardPendingMemory();
        _chain.TruncateTo(length);
    }

    /// <summary>The smallest last body write sent from the caller's memory on this connection (<see cref="TransportConnection.MinLastWriteFromCallerMemory"/>).</summary>
    public int MinLastWriteFromCallerMemory { get; }

    /// <summary>Sends everything buffered in one gathered call; completes synchronously when nothing is buffered.</summary>
    public ValueTask FlushAsync(CancellationToken cancellationToken = default) => SendBufferedAsync(moreFollows: false, cancellationToken);

    /// <summary>
    /// <see cref="FlushAsync(CancellationToken)"/>; with <paramref name="moreFollows"/> another send follows at once, and
    /// the transport may keep these bytes for it (<see cref="TransportConnection.SendBeforeMoreAsync"/>).
    /// </summary>
    private ValueTask SendBufferedAsync(bool moreFollows, CancellationToken cancellationToken)
    {
        if (Volatile.Read(ref _hold) != NotHolding && !TryReleaseHold())
        {
            return FlushAfterTakeOverAsync(cancellationToken);
        }

        if (_chain.Length == 0)
        {
            return default;
        }

        ReadOnlySequence<byte> data = _chain.GetSequence();
        ValueTask send = moreFollows ? _transport.SendBeforeMoreAsync(data, cancellationToken) : _transport.SendAsync(data, cancellationToken);
        if (send.IsCompletedSuccessfully)
        {
            send.GetAwaiter().GetResult();
            _chain.Consume(data.End);
            return default;
        }

        // The client is not taking the bytes as fast as they come: the minimum response data rate applies.
        _rates?.SendStarted(data.Length);
        _flush.Reset();
        _pendingSend = send;
        _pendingEnd = data.End;
        send.ConfigureAwait(false).GetAwaiter().UnsafeOnCompleted(_onSendCompleted ??= OnSendCompleted);
        return new ValueTask(this, _flush.Version);
    }

    /// <summary>
    /// Sends everything buffered (as <see cref="FlushAsync"/>), then <paramref name="data"/> in a send of its own, pinned
    /// for as long as the transport may read it, then buffers a chunk's closing CRLF when <paramref name="endsChunk"/>.
    /// Completes once the transport took the last of <paramref name="data"/>: only then may the caller reuse its memory.
    /// A pending send counts against the minimum response data rate, as a flush's does.
    /// </summary>
    /// <remarks>
    /// The CRLF is written only after the sends: while the first one is pending its completion consumes the chain on
    /// another thread, so nothing may be appended meanwhile. The caller awaits the returned task before it writes again.
    /// </remarks>
    public ValueTask SendAfterBufferedAsync(ReadOnlyMemory<byte> data, bool endsChunk, CancellationToken cancellationToken)
    {
        TrackPeak();
        ValueTask flush = SendBufferedAsync(moreFollows: true, cancellationToken);
        if (!flush.IsCompletedSuccessfully)
        {
            return FlushThenSendAsync(flush, data, endsChunk, cancellationToken);
        }

        flush.GetAwaiter().GetResult();
        return SendAloneAsync(data, endsChunk, cancellationToken);
    }

    private ValueTask SendAloneAsync(ReadOnlyMemory<byte> data, bool endsChunk, CancellationToken cancellationToken)
    {
        // Transports that hand memory to the system later (libuv, io_uring) need it pinned; pool blocks are, this is not.
        MemoryHandle pin = data.Pin();
        ValueTask send;
        try
        {
            send = _transport.SendAsync(new ReadOnlySequence<byte>(data), cancellationToken);
        }
        catch
        {
            pin.Dispose();
            throw;
        }

        if (!send.IsCompletedSuccessfully)
        {
            return AwaitSendAloneAsync(send, pin, data.Length, endsChunk);
        }

        send.GetAwaiter().GetResult();
        pin.Dispose();
        if (endsChunk)
        {
            Write(ChunkedResponseEncoder.ChunkEnd);
        }

        return default;
    }

    // Pooled: a large write pends whenever the client reads slower than the server writes, and a box per write would be
    // an allocation per write.
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask AwaitSendAloneAsync(ValueTask send, MemoryHandle pin, int length, bool endsChunk)
    {
        _rates?.SendStarted(length);
        try
        {
            await send.ConfigureAwait(false);
        }
        finally
        {
            _rates?.SendEnded();
            pin.Dispose();
        }

        if (endsChunk)
        {
            Write(ChunkedResponseEncoder.ChunkEnd);
        }
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask FlushThenSendAsync(ValueTask flush, ReadOnlyMemory<byte> data, bool endsChunk, CancellationToken cancellationToken)
    {
        await flush.ConfigureAwait(false);
        await SendAloneAsync(data, endsChunk, cancellationToken).ConfigureAwait(false);
    }

    private void OnSendCompleted()
    {
        ValueTask send = _pendingSend;
        _pendingSend = default;
        Exception? error = null;
        try
        {
            send.GetAwaiter().GetResult();
            _chain.Consume(_pendingEnd);
        }
        catch (Exception exception)
        {
            error = exception;
        }
        finally
        {
            _rates?.SendEnded();
        }

        if (error is null)
        {
            _flush.SetResult(true);
        }
        else
        {
            _flush.SetException(error);
        }
    }

    void IValueTaskSource.GetResult(short token) => _flush.GetResult(token);

    ValueTaskSourceStatus IValueTaskSource.GetStatus(short token) => _flush.GetStatus(token);

    void IValueTaskSource.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
        => _flush.OnCompleted(continuation, state, token, flags);

    /// <summary>Returns the empty tail block to the pool while the connection waits for its next request.</summary>
    public void ReleaseIdleBlock()
    {
        if (_chain.Length == 0)
        {
            _chain.Dispose();
        }
    }

    internal void TrackPeak()
    {
        long length = _chain.Length;
        if (length > PeakBuffered)
        {
            PeakBuffered = length;
        }
    }

    public void Dispose()
    {
        _writer.Dispose();
        _chain.Dispose();
        _takeOverCopy?.Dispose();
        Debug.Assert(_chain.Length == 0);
    }
}
