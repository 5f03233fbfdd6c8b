using System;
using System.Buffers;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;
using Falconet.Buffers;

namespace Falconet.Transport.Tls;

/// <summary>
/// Sends: the records SslStream writes queue up in pool blocks and leave through one inner send at a time; when a send
/// completes, the records queued meanwhile leave at once, so encrypting and sending overlap.
/// </summary>
internal sealed partial class TlsTransportStream
{
    private const long NoWaiter = -1;

    // The queued records (under _outputGate): those of the send in flight first, then the ones not sent yet.
    private readonly BlockChain _output;
    private readonly Lock _outputGate = new();
    private readonly int _maxSegments;
    private bool _sending;
    private long _peakQueued;
    private Exception? _sendFailure;
    private CancellationToken _sendToken;

    // The inner send in flight (one at a time, under _sending).
    private readonly Action _onSendCompleted;
    private ValueTask _pendingSend;
    private ReadOnlySequence<byte> _sendRecords;

    // The one waiter (see WaitUntilQueuedAtMostAsync): it goes on once at most _waitLimit bytes are queued.
    private ManualResetValueTaskSourceCore<bool> _waitCore;
    private long _waitLimit = NoWaiter;

    /// <summary>The token of the inner sends that start from now on (a batch's own; none between batches).</summary>
    public CancellationToken SendToken
    {
        set
        {
            lock (_outputGate)
            {
                _sendToken = value;
            }
        }
    }

    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        Write(buffer.Span);
        return default;
    }

    /// <summary>The most record bytes ever queued at once (the bound's test: a slow reader never holds more).</summary>
    public long PeakQueued
    {
        get
        {
            lock (_outputGate)
            {
                return _peakQueued;
            }
        }
    }

    public override void Write(ReadOnlySpan<byte> buffer)
    {
        lock (_outputGate)
        {
            _output.Write(buffer);
            _peakQueued = Math.Max(_peakQueued, _output.Length);
        }
    }

    public override void Write(byte[] buffer, int offset, int count) => Write(buffer.AsSpan(offset, count));

    /// <summary>
    /// Starts sending what SslStream wrote (handshake messages, alerts, close_notify) without waiting for the socket: the
    /// records are on their way, and a failure reaches whoever waits next.
    /// </summary>
    public override Task FlushAsync(CancellationToken cancellationToken)
    {
        Push(1);
        Exception? failure = Volatile.Read(ref _sendFailure);
        return failure is null ? Task.CompletedTask : Task.FromException(failure);
    }

    /// <summary>Records are sent by <see cref="FlushAsync"/> or <see cref="Push"/>; a synchronous flush (an alert before a failure) leaves them queued.</summary>
    public override void Flush()
    {
    }

    /// <summary>
    /// Starts an inner send of the records not sent yet, unless one is in flight (its completion sends them) or fewer than
    /// <paramref name="threshold"/> bytes wait. Returns without waiting for the socket.
    /// </summary>
    public void Push(long threshold)
    {
        ReadOnlySequence<byte> records;
        lock (_outputGate)
        {
            if (_sending || _sendFailure is not null || _output.Length < Math.Max(threshold, 1))
            {
                return;
            }

            records = TakeUnsent();
        }

        SendFrom(records);
    }

    /// <summary>Sends every queued record and completes once the inner connection took them all.</summary>
    public ValueTask SendBufferedAsync() => WaitUntilQueuedAtMostAsync(0);

    /// <summary>
    /// Completes once at most <paramref name="limit"/> record bytes are queued (an inner send is started if none is in
    /// flight), or fails with the failure of an inner send. One caller waits at a time: the batch being sent, or the
    /// handshake and closing, which never overlap a batch.
    /// </summary>
    public ValueTask WaitUntilQueuedAtMostAsync(long limit)
    {
        lock (_outputGate)
        {
            if (_sendFailure is null && _output.Length <= limit)
            {
                return default;
            }
        }

        Push(1);
        lock (_outputGate)
        {
            if (_sendFailure is { } failure)
            {
                return ValueTask.FromException(failure);
            }

            if (_output.Length <= limit)
            {
                return default;
            }

            if (_waitLimit != NoWaiter)
            {
                throw new InvalidOperationException("Another caller already waits for the records of this connection to be sent.");
            }

            _waitCore.Reset();
            _waitLimit = limit;
            return new ValueTask(this, _waitCore.Version);
        }
    }

    /// <summary>Under the lock, with no send in flight: the records not sent yet, at most <see cref="_maxSegments"/> blocks of them.</summary>
    private ReadOnlySequence<byte> TakeUnsent()
    {
        ReadOnlySequence<byte> records = _output.GetSequence();
        int segments = 0;
        for (MemoryBlock? block = _output.Head; block is not null; block = block.NextBlock)
        {
            if (++segments == _maxSegments && block.NextBlock is not null)
            {
                records = records.Slice(records.Start, new SequencePosition(block, block.Length));
                break;
            }
        }

        _sending = true;
        return records;
    }

    /// <summary>
    /// Hands <paramref name="records"/> to the inner connection, and what was queued meanwhile after each send the
    /// socket took at once, until a send is pending (its completion goes on) or nothing is left.
    /// </summary>
    private void SendFrom(ReadOnlySequence<byte> records)
    {
        bool wake = false;
        Exception? failure = null;
        while (true)
        {
            ValueTask send;
            try
            {
                send = _inner.SendAsync(records, _sendToken);
            }
            catch (Exception exception)
            {
                send = ValueTask.FromException(exception);
            }

            if (!send.IsCompleted)
            {
                _pendingSend = send;
                _sendRecords = records;
                send.ConfigureAwait(false).GetAwaiter().UnsafeOnCompleted(_onSendCompleted);
                break;
            }

            if (!SendEnded(send, records, ref wake, ref failure, out ReadOnlySequence<byte> next))
            {
                break;
            }

            records = next;
        }

        // Only now, with the next send under way: the waiter encrypts more while the socket takes those records.
        Wake(wake, failure);
    }

    /// <summary>The inner send in flight completed: sends what was queued meanwhile, as <see cref="SendFrom"/> does.</summary>
    private void OnSendCompleted()
    {
        ValueTask send = _pendingSend;
        ReadOnlySequence<byte> sent = _sendRecords;
        _pendingSend = default;
        _sendRecords = default;
        bool wake = false;
        Exception? failure = null;
        if (SendEnded(send, sent, ref wake, ref failure, out ReadOnlySequence<byte> next))
        {
            SendFrom(next);
        }

        Wake(wake, failure);
    }

    /// <summary>
    /// Reads the outcome of a completed inner send and drops its records; true, with the next records, when more wait.
    /// Sets <paramref name="wake"/> when the waiter may go on (enough was sent, or the send failed).
    /// </summary>
    private bool SendEnded(ValueTask send, ReadOnlySequence<byte> sent, ref bool wake, ref Exception? failure, out ReadOnlySequence<byte> next)
    {
        Exception? error = null;
        try
        {
            send.GetAwaiter().GetResult();
        }
        catch (Exception exception)
        {
            error = exception;
        }

        lock (_outputGate)
        {
            _sending = false;
            next = default;
            if (error is null)
            {
                _output.Consume(sent.End);
                if (_output.Length == 0)
                {
                    // Back to the pool between batches: an idle connection holds no block for records it is not sending.
                    _output.Dispose();
                }
                else
                {
                    next = TakeUnsent();
                }
            }
            else
            {
                _sendFailure = error;
            }

            if (_waitLimit != NoWaiter && (error is not null || _output.Length <= _waitLimit))
            {
                _waitLimit = NoWaiter;
                wake = true;
                failure = error;
            }

            return _sending;
        }
    }

    private void Wake(bool wake, Exception? failure)
    {
        if (!wake)
        {
            return;
        }

        if (failure is null)
        {
            _waitCore.SetResult(true);
        }
        else
        {
            _waitCore.SetException(failure);
        }
    }

    // The reusable wait: free again once its outcome was read.

    void IValueTaskSource.GetResult(short token) => _waitCore.GetResult(token);

    ValueTaskSourceStatus IValueTaskSource.GetStatus(short token) => _waitCore.GetStatus(token);

    void IValueTaskSource.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags) =>
        _waitCore.OnCompleted(continuation, state, token, flags);
}
