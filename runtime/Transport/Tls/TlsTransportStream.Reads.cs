using System;
using System.Buffers;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;
using Falconet.Buffers;

namespace Falconet.Transport.Tls;

/// <summary>Reads: SslStream's reads served from the inner connection, the zero-byte read as a receive into one pool block.</summary>
internal sealed partial class TlsTransportStream
{
    private MemoryBlock? _prefetch;

    // The pending read (SslStream reads one at a time): into SslStream's buffer (pinned), or into the prefetch block.
    private readonly Action _onReadCompleted;
    private ManualResetValueTaskSourceCore<int> _readCore;
    private int _readSourceBusy;
    private ValueTask<int> _pendingReceive;
    private MemoryHandle _readPin;
    private Memory<byte> _readBuffer;
    private MemoryBlock? _readBlock;
    private bool _readIntoBulk;

    // The OpenSSL engine's receive in the middle of a long record: its ciphertext, received past a pool block's size.
    private byte[]? _bulk;
    private int _bulkStart;
    private int _bulkEnd;

    public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        if (buffer.IsEmpty)
        {
            SslStreamDrained();
        }

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
                return new ValueTask<int>(ReceivedDirectly(receive.GetAwaiter().GetResult(), buffer.Span));
            }
        }

        if (!TryTakeReadSource())
        {
            return AwaitReceiveAsync(receive, pin, buffer);
        }

        _readPin = pin;
        _readBuffer = buffer;
        return AwaitRead(receive);
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<int> AwaitReceiveAsync(ValueTask<int> receive, MemoryHandle pin, Memory<byte> buffer)
    {
        using (pin)
        {
            return ReceivedDirectly(await receive.ConfigureAwait(false), buffer.Span);
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
            if (!TryTakeReadSource())
            {
                return AwaitPrefetchAsync(block, receive);
            }

            _readBlock = block;
            return AwaitRead(receive);
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

    /// <summary>True when the reusable read awaitable is free (its last outcome was read); else the pooled method above serves.</summary>
    private bool TryTakeReadSource() => Interlocked.CompareExchange(ref _readSourceBusy, 1, 0) == 0;

    /// <summary>Completes through the reusable read awaitable once <paramref name="receive"/> does (its state set by the caller).</summary>
    private ValueTask<int> AwaitRead(ValueTask<int> receive)
    {
        _readCore.Reset();
        _pendingReceive = receive;
        short version = _readCore.Version;
        receive.ConfigureAwait(false).GetAwaiter().UnsafeOnCompleted(_onReadCompleted);
        return new ValueTask<int>(this, version);
    }

    /// <summary>The inner receive completed: the same outcome as <see cref="AwaitReceiveAsync"/> or <see cref="AwaitPrefetchAsync"/>.</summary>
    private void OnReadCompleted()
    {
        ValueTask<int> receive = _pendingReceive;
        _pendingReceive = default;
        MemoryBlock? block = _readBlock;
        _readBlock = null;
        int result = 0;
        Exception? error = null;
        if (_readIntoBulk)
        {
            _readIntoBulk = false;
            MemoryHandle pin = _readPin;
            _readPin = default;
            try
            {
                using (pin)
                {
                    BulkReceived(receive.GetAwaiter().GetResult());
                }
            }
            catch (Exception exception)
            {
                ReleaseBulk();
                error = exception;
            }
        }
        else if (block is null)
        {
            MemoryHandle pin = _readPin;
            Memory<byte> buffer = _readBuffer;
            _readPin = default;
            _readBuffer = default;
            try
            {
                using (pin)
                {
                    result = ReceivedDirectly(receive.GetAwaiter().GetResult(), buffer.Span);
                }
            }
            catch (Exception exception)
            {
                error = exception;
            }
        }
        else
        {
            int received = 0;
            try
            {
                received = receive.GetAwaiter().GetResult();
            }
            catch (Exception exception)
            {
                ReleasePrefetch();
                error = exception;
            }

            if (error is null)
            {
                Prefetched(block, received);
            }
        }

        if (error is null)
        {
            _readCore.SetResult(result);
        }
        else
        {
            _readCore.SetException(error);
        }
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
        int count = Hand(block.Data.Span, destination);
        block.Start += count;
        if (block.Start == block.End)
        {
            // Drained: a busy connection holds no block here, only an idle one while it waits.
            ReleasePrefetch();
        }

        return count;
    }

    /// <summary>
    /// For the OpenSSL engine's BIO: copies received bytes into <paramref name="destination"/>; -1 when none wait (the
    /// caller receives with <see cref="WaitForCiphertextAsync"/>), 0 once the peer ended the stream.
    /// </summary>
    public int TakeReceived(Span<byte> destination) =>
        _bulk is { } bulk ? CopyBulk(bulk, destination)
        : _prefetch is { } block ? CopyPrefetched(block, destination)
        : _endOfStream ? 0 : -1;

    /// <summary>Waits for the peer's next bytes into a pool block (as a zero-byte read from SslStream would); completes with 0.</summary>
    public ValueTask<int> WaitForRecordsAsync(CancellationToken cancellationToken) => WaitForDataAsync(cancellationToken);

    /// <summary>
    /// For the OpenSSL engine's BIO (<see cref="TakeReceived"/> serves what arrived): waits for the peer's next bytes
    /// (completes with 0) into a pool block between records, or when at most a block of the current record is missing;
    /// into one buffer of the shared array pool large enough for the rest of the record when more is, so that a full
    /// record (16 KiB of plaintext) takes one receive, not one per 4 KiB block. That buffer goes back to the pool once
    /// OpenSSL took its bytes.
    /// </summary>
    public ValueTask<int> WaitForCiphertextAsync(CancellationToken cancellationToken)
    {
        int missing = RecordBytesMissing;
        return missing > SlabMemoryPool.BlockSize ? WaitForBulkAsync(missing, cancellationToken) : WaitForDataAsync(cancellationToken);
    }

    /// <summary>Receives into a pooled array of at least <paramref name="size"/> bytes (pinned while the receive is pending).</summary>
    private ValueTask<int> WaitForBulkAsync(int size, CancellationToken cancellationToken)
    {
        byte[] bulk = ArrayPool<byte>.Shared.Rent(size);
        _bulk = bulk;
        Memory<byte> memory = bulk;
        MemoryHandle pin = memory.Pin();
        ValueTask<int> receive;
        try
        {
            receive = _inner.ReceiveAsync(memory, cancellationToken);
        }
        catch
        {
            pin.Dispose();
            ReleaseBulk();
            throw;
        }

        if (!receive.IsCompleted)
        {
            if (!TryTakeReadSource())
            {
                return AwaitBulkAsync(receive, pin);
            }

            _readPin = pin;
            _readIntoBulk = true;
            return AwaitRead(receive);
        }

        using (pin)
        {
            try
            {
                BulkReceived(receive.GetAwaiter().GetResult());
            }
            catch
            {
                ReleaseBulk();
                throw;
            }
        }

        return new ValueTask<int>(0);
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<int> AwaitBulkAsync(ValueTask<int> receive, MemoryHandle pin)
    {
        using (pin)
        {
            try
            {
                BulkReceived(await receive.ConfigureAwait(false));
            }
            catch
            {
                ReleaseBulk();
                throw;
            }
        }

        return 0;
    }

    private void BulkReceived(int received)
    {
        _bulkStart = 0;
        _bulkEnd = Received(received, _bulk.AsSpan(0, received));
        if (received == 0)
        {
            ReleaseBulk();
        }
    }

    private int CopyBulk(byte[] bulk, Span<byte> destination)
    {
        int count = Hand(bulk.AsSpan(_bulkStart, _bulkEnd - _bulkStart), destination);
        _bulkStart += count;
        if (_bulkStart == _bulkEnd)
        {
            ReleaseBulk();
        }

        return count;
    }

    private void ReleaseBulk()
    {
        if (_bulk is { } bulk)
        {
            _bulk = null;
            ArrayPool<byte>.Shared.Return(bulk);
        }
    }

    /// <summary>Copies what fits of <paramref name="data"/> into <paramref name="destination"/>, its record framing followed.</summary>
    private int Hand(ReadOnlySpan<byte> data, Span<byte> destination)
    {
        int count = Math.Min(data.Length, destination.Length);
        data[..count].CopyTo(destination);
        Track(data[..count]);
        return count;
    }

    private int ReceivedDirectly(int count, ReadOnlySpan<byte> data)
    {
        Track(data[..count]);
        return Received(count, data);
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

    // The reusable read awaitable: free again once its outcome was read.

    int IValueTaskSource<int>.GetResult(short token)
    {
        bool current = token == _readCore.Version;
        try
        {
            return _readCore.GetResult(token);
        }
        finally
        {
            if (current)
            {
                Volatile.Write(ref _readSourceBusy, 0);
            }
        }
    }

    ValueTaskSourceStatus IValueTaskSource<int>.GetStatus(short token) => _readCore.GetStatus(token);

    void IValueTaskSource<int>.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags) =>
        _readCore.OnCompleted(continuation, state, token, flags);
}
