using System;
using System.Buffers;
using System.IO;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;
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
/// <para>
/// Pending calls. A read or a send that has to wait completes through a reusable awaitable of this stream (one for
/// reads, one for sends) driven by the inner operation's continuation, not through a pooled async method: with
/// <see cref="IoScheduling.ThreadPool"/> the inner completion runs on another thread than the call, and a pooled box
/// rented on one thread and returned on another misses the pool's per-thread cache and is allocated anew.
/// </para>
/// </remarks>
internal sealed class TlsTransportStream : Stream, IValueTaskSource<int>, IValueTaskSource
{
    /// <summary>The first byte of a TLS record carrying a handshake message (content type 22).</summary>
    internal const byte HandshakeRecordType = 22;

    /// <summary>Content type 23: application data (in TLS 1.3 also every encrypted record, alerts and post-handshake messages included).</summary>
    private const byte ApplicationDataRecordType = 23;

    /// <summary>What a TLS 1.3 record adds to its plaintext without padding: the inner content type and a 16-byte tag.</summary>
    private const int Tls13RecordOverhead = 17;

    private readonly TransportConnection _inner;
    private readonly BlockChain _output;
    private readonly Lock _outputGate = new();
    private MemoryBlock? _prefetch;
    private bool _sending;
    private TaskCompletionSource? _otherSendDone;
    private bool _gathering;
    private bool _endOfStream;

    // The record framing of the bytes handed to SslStream (see SslStreamNeedsRecords).
    private long _handed;
    private long _drainedAt = -1;
    private long _otherRecordEnd;
    private int _headerRead;
    private int _recordType;
    private int _recordRemaining;
    private int _recordLengthHigh;
    private int _recordLength;
    private long _plaintextExpected;
    private long _plaintextReturned;
    private bool _framingLost;

    // The pending read (SslStream reads one at a time): into SslStream's buffer (pinned), or into the prefetch block.
    private readonly Action _onReadCompleted;
    private ManualResetValueTaskSourceCore<int> _readCore;
    private int _readSourceBusy;
    private ValueTask<int> _pendingReceive;
    private MemoryHandle _readPin;
    private Memory<byte> _readBuffer;
    private MemoryBlock? _readBlock;

    // The pending send (one at a time, under _sending): the records in flight and the inner send carrying them.
    private readonly Action _onSendCompleted;
    private ManualResetValueTaskSourceCore<bool> _sendCore;
    private int _sendSourceBusy;
    private ValueTask _pendingSend;
    private ReadOnlySequence<byte> _sendRecords;
    private CancellationToken _sendToken;

    public TlsTransportStream(TransportConnection inner)
    {
        _inner = inner;
        _output = new BlockChain(inner.Pool);
        _onReadCompleted = OnReadCompleted;
        _onSendCompleted = OnSendCompleted;
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
        if (buffer.IsEmpty)
        {
            // SslStream reads zero bytes only when it holds no whole record and no decrypted byte: every record before
            // this point is processed and its plaintext returned.
            _drainedAt = _handed;
            _plaintextExpected = 0;
            _plaintextReturned = 0;
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
        if (block is null)
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
        ReadOnlySpan<byte> data = block.Data.Span;
        int count = Math.Min(data.Length, destination.Length);
        data[..count].CopyTo(destination);
        Track(data[..count]);
        block.Start += count;
        if (block.Start == block.End)
        {
            // Drained: a busy connection holds no block here, only an idle one while it waits.
            ReleasePrefetch();
        }

        return count;
    }

    /// <summary>
    /// True when SslStream holds no whole record it has not processed and no bytes wait here: the next SslStream read
    /// would wait for the peer, so <see cref="TlsConnection"/> may wait for bytes first (<see cref="WaitForRecordsAsync"/>)
    /// and read once they are here, so that the read completes where it started. Holds only when no whole record other
    /// than application data (an alert, a handshake message: SslStream stops before those) arrived since SslStream last
    /// held no whole record, and while the record framing was followed.
    /// </summary>
    /// <remarks>Only meaningful after a read that returned less than it was asked for (no decrypted bytes left in SslStream).</remarks>
    public bool SslStreamNeedsRecords =>
        !_framingLost && _otherRecordEnd <= _drainedAt && (!CountsPlaintext || _plaintextExpected == _plaintextReturned) &&
        _prefetch is null && !_endOfStream;

    /// <summary>
    /// Set for TLS 1.3, where every record is application data on the outside, close_notify included (SslStream processes
    /// it with the data before it and reads 0 next, without the peer): the records since SslStream last held no whole
    /// record must then account for exactly the plaintext it returned (a record carries its plaintext, one byte of inner
    /// content type and a 16-byte tag). An alert, a padded record or a post-handshake message leaves them apart, and the
    /// next read goes through SslStream at once.
    /// </summary>
    public bool CountsPlaintext { get; set; }

    /// <summary>Plaintext SslStream returned to <see cref="TlsConnection"/>.</summary>
    public void Returned(int count) => _plaintextReturned += count;

    /// <summary>Waits for the peer's next bytes into a pool block (as a zero-byte read from SslStream would); completes with 0.</summary>
    public ValueTask<int> WaitForRecordsAsync(CancellationToken cancellationToken) => WaitForDataAsync(cancellationToken);

    private int ReceivedDirectly(int count, ReadOnlySpan<byte> data)
    {
        Track(data[..count]);
        return Received(count, data);
    }

    /// <summary>
    /// Whether <see cref="SslStreamNeedsRecords"/> is asked (the connection waits for records before SslStream reads): only
    /// then is the record framing followed, so other connections do no work for it.
    /// </summary>
    public bool TracksRecords { get; set; }

    /// <summary>Follows the record framing of the bytes handed to SslStream (5-byte headers: type, version, length).</summary>
    private void Track(ReadOnlySpan<byte> data)
    {
        if (!TracksRecords)
        {
            return;
        }

        while (!data.IsEmpty && !_framingLost)
        {
            if (_recordRemaining > 0)
            {
                int take = Math.Min(data.Length, _recordRemaining);
                _recordRemaining -= take;
                _handed += take;
                data = data[take..];
                if (_recordRemaining == 0)
                {
                    RecordHanded();
                }

                continue;
            }

            byte value = data[0];
            data = data[1..];
            _handed++;
            switch (_headerRead++)
            {
                case 0:
                    _recordType = value;
                    _framingLost = value is < 20 or > 24;
                    break;
                case 1:
                    _framingLost = value != 3;
                    break;
                case 2:
                    break;
                case 3:
                    _recordLengthHigh = value;
                    break;
                default:
                    _recordRemaining = (_recordLengthHigh << 8) | value;
                    _recordLength = _recordRemaining;
                    _headerRead = 0;
                    if (_recordRemaining == 0)
                    {
                        RecordHanded();
                    }

                    break;
            }
        }
    }

    /// <summary>A whole record is with SslStream now.</summary>
    private void RecordHanded()
    {
        if (_recordType != ApplicationDataRecordType)
        {
            _otherRecordEnd = _handed;
        }
        else
        {
            _plaintextExpected += _recordLength - Tls13RecordOverhead;
        }
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
                if (Interlocked.CompareExchange(ref _sendSourceBusy, 1, 0) != 0)
                {
                    // Rare: the last pending send's outcome is being delivered still (its caller has not read it yet).
                    return AwaitSendAsync(send, records, cancellationToken);
                }

                _sendCore.Reset();
                _sendRecords = records;
                _sendToken = cancellationToken;
                _pendingSend = send;
                short version = _sendCore.Version;
                send.ConfigureAwait(false).GetAwaiter().UnsafeOnCompleted(_onSendCompleted);
                return new ValueTask(this, version);
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

    /// <summary>The inner send completed: sends what was written meanwhile, as <see cref="AwaitSendAsync"/> does, then completes.</summary>
    private void OnSendCompleted()
    {
        while (true)
        {
            ValueTask send = _pendingSend;
            _pendingSend = default;
            try
            {
                send.GetAwaiter().GetResult();
            }
            catch (Exception exception)
            {
                EndSend();
                CompletePendingSend(exception);
                return;
            }

            if (!NextRecords(ref _sendRecords))
            {
                CompletePendingSend(null);
                return;
            }

            try
            {
                send = _inner.SendAsync(_sendRecords, _sendToken);
            }
            catch (Exception exception)
            {
                EndSend();
                CompletePendingSend(exception);
                return;
            }

            _pendingSend = send;
            if (!send.IsCompleted)
            {
                send.ConfigureAwait(false).GetAwaiter().UnsafeOnCompleted(_onSendCompleted);
                return;
            }
        }
    }

    private void CompletePendingSend(Exception? error)
    {
        _sendRecords = default;
        _sendToken = default;
        if (error is null)
        {
            _sendCore.SetResult(true);
        }
        else
        {
            _sendCore.SetException(error);
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

    // ---- The reusable awaitables: free again once their outcome was read ----

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

    void IValueTaskSource.GetResult(short token)
    {
        bool current = token == _sendCore.Version;
        try
        {
            _sendCore.GetResult(token);
        }
        finally
        {
            if (current)
            {
                Volatile.Write(ref _sendSourceBusy, 0);
            }
        }
    }

    ValueTaskSourceStatus IValueTaskSource.GetStatus(short token) => _sendCore.GetStatus(token);

    void IValueTaskSource.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags) =>
        _sendCore.OnCompleted(continuation, state, token, flags);

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
