using System;
using System.Buffers;
using System.IO;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Buffers;

namespace Falconet.Transport.Tls;

/// <summary>
/// The stream <see cref="System.Net.Security.SslStream"/> reads records from and writes records to: a thin adapter over
/// the inner <see cref="TransportConnection"/> that keeps the transport contract (one receive and one send at a time).
/// </summary>
/// <remarks>
/// <para>
/// Reads. SslStream first asks for zero bytes (to learn that data is there without holding its buffer) and then reads
/// into its own buffer. The transport contract has no zero-byte receive (0 means end of stream), so a zero-byte read
/// receives into one pool block instead: an idle connection waits with a pinned pool block, not with SslStream's larger
/// buffer, and the next read copies those bytes out (the one copy TLS adds on receive, at most a block per wait). Other
/// reads receive straight into SslStream's buffer, pinned while the receive is pending (libuv reads into it later).
/// </para>
/// <para>
/// Writes. Records are appended to pool blocks and sent when SslStream flushes (handshake messages, alerts) or when
/// <see cref="TlsConnection"/> ends a batch, so the records of a pipelined batch leave in one gathered send as plain
/// responses do. Only one inner send runs at a time; records written while it runs go out right after it.
/// </para>
/// </remarks>
internal sealed class TlsTransportStream : Stream
{
    /// <summary>The first byte of a TLS record carrying a handshake message (content type 22).</summary>
    internal const byte HandshakeRecordType = 22;

    private readonly TransportConnection _inner;
    private readonly BlockChain _output;
    private readonly Lock _outputGate = new();
    private MemoryBlock? _prefetch;
    private bool _sending;
    private TaskCompletionSource? _otherSendDone;
    private bool _gathering;
    private bool _endOfStream;

    public TlsTransportStream(TransportConnection inner)
    {
        _inner = inner;
        _output = new BlockChain(inner.Pool);
    }

    /// <summary>The first byte the peer sent (-1 before any): a TLS client starts with <see cref="HandshakeRecordType"/>.</summary>
    public int FirstByte { get; private set; } = -1;

    /// <summary>True once the inner connection reported the end of its stream.</summary>
    public bool EndOfStream => _endOfStream;

    /// <summary>Record bytes written and not yet handed to the inner connection.</summary>
    public long Buffered
    {
        get
        {
            lock (_outputGate)
            {
                return _output.Length;
            }
        }
    }

    public override bool CanRead => true;

    public override bool CanWrite => true;

    public override bool CanSeek => false;

    public override long Length => throw new NotSupportedException();

    public override long Position
    {
        get => throw new NotSupportedException();
        set => throw new NotSupportedException();
    }

    // ---- Reads (SslStream runs one at a time) ----

    public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        if (_prefetch is { } block)
        {
            return new ValueTask<int>(buffer.IsEmpty ? 0 : CopyPrefetched(block, buffer.Span));
        }

        if (_endOfStream)
        {
            return new ValueTask<int>(0);
        }

        if (buffer.IsEmpty)
        {
            return WaitForDataAsync(cancellationToken);
        }

        MemoryHandle pin = buffer.Pin();
        ValueTask<int> receive;
        try
        {
            receive = _inner.ReceiveAsync(buffer, cancellationToken);
        }
        catch
        {
            pin.Dispose();
            throw;
        }

        if (receive.IsCompleted)
        {
            using (pin)
            {
                return new ValueTask<int>(Received(receive.GetAwaiter().GetResult(), buffer.Span));
            }
        }

        return AwaitReceiveAsync(receive, pin, buffer);
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<int> AwaitReceiveAsync(ValueTask<int> receive, MemoryHandle pin, Memory<byte> buffer)
    {
        using (pin)
        {
            return Received(await receive.ConfigureAwait(false), buffer.Span);
        }
    }

    /// <summary>A zero-byte read: receives into a pool block and completes with 0 once bytes (or the end) arrived.</summary>
    private ValueTask<int> WaitForDataAsync(CancellationToken cancellationToken)
    {
        MemoryBlock block = _inner.Pool.Rent();
        _prefetch = block;
        ValueTask<int> receive;
        try
        {
            receive = _inner.ReceiveAsync(block.Memory, cancellationToken);
        }
        catch
        {
            ReleasePrefetch();
            throw;
        }

        if (!receive.IsCompleted)
        {
            return AwaitPrefetchAsync(block, receive);
        }

        int received;
        try
        {
            received = receive.GetAwaiter().GetResult();
        }
        catch
        {
            ReleasePrefetch();
            throw;
        }

        Prefetched(block, received);
        return new ValueTask<int>(0);
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<int> AwaitPrefetchAsync(MemoryBlock block, ValueTask<int> receive)
    {
        int received;
        try
        {
            received = await receive.ConfigureAwait(false);
        }
        catch
        {
            ReleasePrefetch();
            throw;
        }

        Prefetched(block, received);
        return 0;
    }

    private void Prefetched(MemoryBlock block, int received)
    {
        block.Start = 0;
        block.End = Received(received, block.Memory.Span[..received]);
        if (received == 0)
        {
            ReleasePrefetch();
        }
    }

    private int CopyPrefetched(MemoryBlock block, Span<byte> destination)
    {
        ReadOnlySpan<byte> data = block.Data.Span;
        int count = Math.Min(data.Length, destination.Length);
        data[..count].CopyTo(destination);
        block.Start += count;
        if (block.Start == block.End)
        {
            // Drained: a busy connection holds no block here, only an idle one while it waits.
            ReleasePrefetch();
        }

        return count;
    }

    private int Received(int count, ReadOnlySpan<byte> data)
    {
        if (count == 0)
        {
            _endOfStream = true;
        }
        else if (FirstByte < 0)
        {
            FirstByte = data[0];
        }

        return count;
    }

    private void ReleasePrefetch()
    {
        if (_prefetch is { } block)
        {
            _prefetch = null;
            block.Pool.Return(block);
        }
    }

    // ---- Writes ----

    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        Write(buffer.Span);
        return default;
    }

    public override void Write(ReadOnlySpan<byte> buffer)
    {
        lock (_outputGate)
        {
            _output.Write(buffer);
        }
    }

    public override void Write(byte[] buffer, int offset, int count) => Write(buffer.AsSpan(offset, count));

    public override Task FlushAsync(CancellationToken cancellationToken)
    {
        ValueTask flush = SendBufferedAsync(cancellationToken);
        return flush.IsCompletedSuccessfully ? Task.CompletedTask : flush.AsTask();
    }

    /// <summary>Records are sent when <see cref="SendBufferedAsync"/> runs; a synchronous flush (an alert before a failure) leaves them for it.</summary>
    public override void Flush()
    {
    }

    /// <summary>
    /// From here to <see cref="EndGather"/> a flush sends nothing: <see cref="TlsConnection"/> encrypts a whole batch and
    /// then sends all its records at once.
    /// </summary>
    public void BeginGather()
    {
        lock (_outputGate)
        {
            _gathering = true;
        }
    }

    public void EndGather()
    {
        lock (_outputGate)
        {
            _gathering = false;
        }
    }

    /// <summary>
    /// Sends every buffered record in one gathered send, then whatever was written meanwhile; completes at once when
    /// another send is running (it sends these records too) or, outside <see cref="SendAsync"/>, while a batch is gathered.
    /// </summary>
    public ValueTask SendBufferedAsync(CancellationToken cancellationToken) => SendAsync(fromGather: false, cancellationToken);

    /// <summary>Like <see cref="SendBufferedAsync"/>, for the batch being gathered.</summary>
    public ValueTask SendGatheredAsync(CancellationToken cancellationToken) => SendAsync(fromGather: true, cancellationToken);

    private ValueTask SendAsync(bool fromGather, CancellationToken cancellationToken)
    {
        ReadOnlySequence<byte> records;
        lock (_outputGate)
        {
            if (_output.Length == 0 || (_gathering && !fromGather))
            {
                return default;
            }

            if (_sending)
            {
                if (!fromGather)
                {
                    return default;
                }

                // Rare: records SslStream wrote outside a batch (a post-handshake message) are being sent. That send
                // carries this batch's records too; the batch completes once it has.
                _otherSendDone ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
                return AfterOtherSendAsync(_otherSendDone.Task, cancellationToken);
            }

            _sending = true;
            records = _output.GetSequence();
        }

        while (true)
        {
            ValueTask send;
            try
            {
                send = _inner.SendAsync(records, cancellationToken);
            }
            catch
            {
                EndSend();
                throw;
            }

            if (!send.IsCompleted)
            {
                return AwaitSendAsync(send, records, cancellationToken);
            }

            try
            {
                send.GetAwaiter().GetResult();
            }
            catch
            {
                EndSend();
                throw;
            }

            if (!NextRecords(ref records))
            {
                return default;
            }
        }
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask AwaitSendAsync(ValueTask send, ReadOnlySequence<byte> records, CancellationToken cancellationToken)
    {
        while (true)
        {
            try
            {
                await send.ConfigureAwait(false);
            }
            catch
            {
                EndSend();
                throw;
            }

            if (!NextRecords(ref records))
            {
                return;
            }

            try
            {
                send = _inner.SendAsync(records, cancellationToken);
            }
            catch
            {
                EndSend();
                throw;
            }
        }
    }

    private async ValueTask AfterOtherSendAsync(Task otherSend, CancellationToken cancellationToken)
    {
        await otherSend.ConfigureAwait(false);

        // Sends what is left, if the other send failed or stopped short of this batch's records.
        await SendAsync(fromGather: true, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Drops the records just sent; true (with the next ones) when more were written meanwhile.</summary>
    private bool NextRecords(ref ReadOnlySequence<byte> records)
    {
        lock (_outputGate)
        {
            _output.Consume(records.End);
            if (_output.Length == 0)
            {
                // Back to the pool between batches: an idle connection holds no block for records it is not sending.
                _output.Dispose();
                SendEnded();
                return false;
            }

            records = _output.GetSequence();
            return true;
        }
    }

    private void EndSend()
    {
        lock (_outputGate)
        {
            SendEnded();
        }
    }

    /// <summary>Under the lock: no send runs anymore; a batch waiting for the other send goes on.</summary>
    private void SendEnded()
    {
        _sending = false;
        if (_otherSendDone is { } done)
        {
            _otherSendDone = null;
            done.TrySetResult();
        }
    }

    // ---- Not supported: SslStream is used only through its asynchronous API ----

    public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException();

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();

    /// <summary>Returns the blocks (once nothing is pending on the inner connection anymore).</summary>
    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            ReleasePrefetch();
            lock (_outputGate)
            {
                _output.Dispose();
            }
        }

        base.Dispose(disposing);
    }
}
