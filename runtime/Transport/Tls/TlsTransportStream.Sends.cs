using System;
using System.Buffers;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;
using Falconet.Buffers;

namespace Falconet.Transport.Tls;

/// <summary>Sends: records SslStream writes go into pool blocks and leave in one gathered inner send per flush or batch.</summary>
internal sealed partial class TlsTransportStream
{
    private readonly BlockChain _output;
    private readonly Lock _outputGate = new();
    private bool _sending;
    private TaskCompletionSource? _otherSendDone;
    private bool _gathering;

    // The pending send (one at a time, under _sending): the records in flight and the inner send carrying them.
    private readonly Action _onSendCompleted;
    private ManualResetValueTaskSourceCore<bool> _sendCore;
    private int _sendSourceBusy;
    private ValueTask _pendingSend;
    private ReadOnlySequence<byte> _sendRecords;
    private CancellationToken _sendToken;

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

    // The reusable send awaitable: free again once its outcome was read.

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
}
