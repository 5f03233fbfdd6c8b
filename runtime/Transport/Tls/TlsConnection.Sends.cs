using System;
using System.Buffers;
using System.IO;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;

namespace Falconet.Transport.Tls;

/// <summary>Sends: a batch encrypted into records (staged into full-size ones when it spans blocks) and sent gathered, at most eight blocks per inner send.</summary>
internal sealed partial class TlsConnection
{
    // The batch being encrypted and sent (one at a time, under _send): see EncryptAndSendAsync.
    private readonly Action _onBatchStepCompleted;
    private ManualResetValueTaskSourceCore<int> _batchCore;
    private ReadOnlySequence<byte> _batch;
    private SequencePosition _batchPosition;
    private bool _batchSingle;
    private ReadOnlyMemory<byte> _batchRest;
    private ReadOnlyMemory<byte> _batchRecord;
    private CancellationToken _batchToken;
    private BatchStep _batchStep;
    private ValueTask _batchPending;
    private byte[]? _staging;
    private int _staged;

    public override ValueTask SendAsync(ReadOnlySequence<byte> buffers, CancellationToken ct = default)
    {
        if (ct.IsCancellationRequested)
        {
            return ValueTask.FromCanceled(ct);
        }

        if (IsClosedLocally)
        {
            return ValueTask.FromException(new ConnectionAbortedException("The connection was aborted or disposed."));
        }

        if (buffers.IsEmpty)
        {
            return default;
        }

        if (_send.IsPending)
        {
            throw new InvalidOperationException("A send is already pending on this connection.");
        }

        ValueTask<int> send = EncryptAndSendAsync(buffers, ct);
        if (!send.IsCompleted)
        {
            return new ValueTask(_send, _send.Begin(send));
        }

        try
        {
            CompleteSend(send);
            return default;
        }
        catch (Exception exception)
        {
            return ValueTask.FromException(exception);
        }
    }

    /// <summary>
    /// Encrypts the batch and sends the records gathered; completes synchronously when the socket took them at once.
    /// A batch of several blocks is staged into full-size records (<see cref="RecordPayload"/>) rather than one record
    /// per 4 KiB block: a copy plain connections do not make, measured cheaper than four times the records.
    /// </summary>
    /// <remarks>
    /// Driven by continuations through one reusable awaitable (<see cref="_batchCore"/>) rather than a pooled async
    /// method: with <see cref="IoScheduling.ThreadPool"/> the send completes on another thread than the call, and a
    /// pooled box returned on another thread than the one that rented it misses the per-thread cache and is allocated.
    /// </remarks>
    private ValueTask<int> EncryptAndSendAsync(ReadOnlySequence<byte> buffers, CancellationToken ct)
    {
        _batch = buffers;
        _batchPosition = buffers.Start;
        _batchSingle = buffers.IsSingleSegment;
        _batchRest = default;
        _batchToken = ct;
        _batchStep = BatchStep.NextRecord;
        _batchCore.Reset();
        short version = _batchCore.Version;
        _stream.BeginGather();
        bool done;
        try
        {
            done = AdvanceBatch();
        }
        catch (Exception exception)
        {
            EndBatch();
            return ValueTask.FromException<int>(exception);
        }

        if (done)
        {
            EndBatch();
            return new ValueTask<int>(0);
        }

        return new ValueTask<int>(this, version);
    }

    /// <summary>Runs the batch on until it is sent (true) or a step is pending (false: its continuation goes on).</summary>
    private bool AdvanceBatch()
    {
        while (true)
        {
            switch (_batchStep)
            {
                case BatchStep.NextRecord:
                    if (!TakeRecord())
                    {
                        _batchStep = BatchStep.Done;
                        if (AwaitBatchStep(_stream.SendGatheredAsync(_batchToken)))
                        {
                            return false;
                        }

                        break;
                    }

                    // Sends first what would pass MaxGatheredBytes with this record.
                    _batchStep = BatchStep.Write;
                    long gathered = _stream.Buffered;
                    if (gathered != 0 && gathered + _batchRecord.Length + RecordOverhead > MaxGatheredBytes &&
                        AwaitBatchStep(_stream.SendGatheredAsync(_batchToken)))
                    {
                        return false;
                    }

                    break;

                case BatchStep.Write:
                    // Completes synchronously: the records only go into blocks.
                    _batchStep = BatchStep.NextRecord;
                    if (AwaitBatchStep(_ssl.WriteAsync(_batchRecord, _batchToken)))
                    {
                        return false;
                    }

                    break;

                default:
                    return true;
            }
        }
    }

    /// <summary>True when <paramref name="step"/> is pending (the batch goes on in its continuation); throws its failure.</summary>
    private bool AwaitBatchStep(ValueTask step)
    {
        if (step.IsCompleted)
        {
            step.GetAwaiter().GetResult();
            return false;
        }

        _batchPending = step;
        step.ConfigureAwait(false).GetAwaiter().UnsafeOnCompleted(_onBatchStepCompleted);
        return true;
    }

    private void OnBatchStepCompleted()
    {
        ValueTask step = _batchPending;
        _batchPending = default;
        bool done;
        try
        {
            step.GetAwaiter().GetResult();
            done = AdvanceBatch();
        }
        catch (Exception exception)
        {
            EndBatch();
            _batchCore.SetException(exception);
            return;
        }

        if (done)
        {
            EndBatch();
            _batchCore.SetResult(0);
        }
    }

    /// <summary>
    /// The next record's plaintext into <see cref="_batchRecord"/>: a single-segment batch as it is, a larger one staged
    /// into records of <see cref="RecordPayload"/> bytes; false when the batch is all written.
    /// </summary>
    private bool TakeRecord()
    {
        if (_batchSingle)
        {
            ReadOnlyMemory<byte> first = _batch.First;
            _batch = default;
            _batchRecord = first;
            return !first.IsEmpty;
        }

        _staging ??= ArrayPool<byte>.Shared.Rent(RecordPayload);
        while (true)
        {
            if (_batchRest.IsEmpty)
            {
                if (_batch.IsEmpty || !_batch.TryGet(ref _batchPosition, out _batchRest))
                {
                    _batch = default;
                    _batchRecord = _staging.AsMemory(0, _staged);
                    _staged = 0;
                    return !_batchRecord.IsEmpty;
                }

                continue;
            }

            int take = Math.Min(_batchRest.Length, RecordPayload - _staged);
            _batchRest.Span[..take].CopyTo(_staging.AsSpan(_staged));
            _staged += take;
            _batchRest = _batchRest[take..];
            if (_staged == RecordPayload)
            {
                _batchRecord = _staging.AsMemory(0, _staged);
                _staged = 0;
                return true;
            }
        }
    }

    /// <summary>Ends the gathering and forgets the batch (its blocks belong to the caller again).</summary>
    private void EndBatch()
    {
        _stream.EndGather();
        _batch = default;
        _batchPosition = default;
        _batchRest = default;
        _batchRecord = default;
        _batchToken = default;
        _staged = 0;
        if (_staging is { } staging)
        {
            _staging = null;
            ArrayPool<byte>.Shared.Return(staging);
        }
    }

    int IValueTaskSource<int>.GetResult(short token) => _batchCore.GetResult(token);

    ValueTaskSourceStatus IValueTaskSource<int>.GetStatus(short token) => _batchCore.GetStatus(token);

    void IValueTaskSource<int>.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags) =>
        _batchCore.OnCompleted(continuation, state, token, flags);

    /// <summary>Where a pending batch goes on.</summary>
    private enum BatchStep
    {
        NextRecord,
        Write,
        Done,
    }

    private int CompleteSend(ValueTask<int> send)
    {
        try
        {
            return send.GetAwaiter().GetResult();
        }
        catch (Exception exception) when (exception is not ConnectionAbortedException && IsClosedLocally)
        {
            throw new ConnectionAbortedException("The connection was aborted or disposed during a send.", exception);
        }
        catch (Exception exception) when (exception is not (IOException or OperationCanceledException))
        {
            throw new IOException("The TLS send failed: " + exception.Message, exception);
        }
    }
}
