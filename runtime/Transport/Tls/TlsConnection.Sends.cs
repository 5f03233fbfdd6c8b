using System;
using System.Buffers;
using System.IO;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;

namespace Falconet.Transport.Tls;

/// <summary>
/// Sends: a batch encrypted record by record (the first at most a block, full-size ones after it), the records sent while
/// the next ones are encrypted, within a bound of bytes in flight.
/// </summary>
internal sealed partial class TlsConnection
{
    // The bound on queued record bytes, and how many unsent bytes start an inner send while a batch is encrypted.
    private readonly int _maxBytesInFlight;
    private readonly long _sendThreshold;

    // The batch being encrypted and sent (one at a time, under _send): see EncryptAndSendAsync.
    private readonly Action _onBatchStepCompleted;
    private ManualResetValueTaskSourceCore<int> _batchCore;
    private ReadOnlySequence<byte> _batch;
    private SequencePosition _batchPosition;
    private long _batchLeft;
    private bool _batchFirst;
    private ReadOnlyMemory<byte> _batchRest;
    private ReadOnlyMemory<byte> _batchRecord;
    private CancellationToken _batchToken;
    private BatchStep _batchStep;
    private ValueTask _batchPending;
    private byte[]? _staging;
    private int _staged;

    // This batch keeps its records for the next send (SendBeforeMoreAsync); the last batch did.
    private bool _batchKeeps;
    private bool _recordsKept;

    public override ValueTask SendAsync(ReadOnlySequence<byte> buffers, CancellationToken ct = default) => SendAsync(buffers, keep: false, ct);

    /// <summary>4 KiB: a last body write of at least one block is encrypted from the caller's memory (see <see cref="SendBeforeMoreAsync"/>).</summary>
    internal override int MinLastWriteFromCallerMemory => FirstRecordPayload;

    /// <summary>
    /// Encrypts the batch and keeps its records queued for the send that follows, so that a response head and a body sent
    /// from the caller's memory leave in one inner send; completes once encrypted (or once the bound on bytes in flight let
    /// the last record in). Records past the send threshold still start an inner send meanwhile.
    /// </summary>
    internal override ValueTask SendBeforeMoreAsync(ReadOnlySequence<byte> buffers, CancellationToken ct) => SendAsync(buffers, keep: true, ct);

    private ValueTask SendAsync(ReadOnlySequence<byte> buffers, bool keep, CancellationToken ct)
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

        ValueTask<int> send = EncryptAndSendAsync(buffers, keep, ct);
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
    /// Encrypts the batch and sends its records, completing once the inner connection took the last of them; completes
    /// synchronously when the socket took every send at once.
    /// </summary>
    /// <remarks>
    /// <para>
    /// Records: the batch's first is at most <see cref="FirstRecordPayload"/> bytes, straight from its first segment; the
    /// rest is staged into full-size records (<see cref="RecordPayload"/>) rather than one record per 4 KiB block: a copy
    /// plain connections do not make, measured cheaper than four times the records. A segment that holds a whole record
    /// (or the whole rest of the batch) is encrypted where it is.
    /// </para>
    /// <para>
    /// Sending: once <see cref="_sendThreshold"/> bytes of records wait and no inner send is in flight, one starts, and
    /// encryption goes on meanwhile; each completed send starts the next with what was queued. Before a record is
    /// encrypted, the records queued and in flight must leave room for it within <see cref="_maxBytesInFlight"/>, else
    /// the batch waits for the socket: a slow reader holds the connection to that bound.
    /// </para>
    /// <para>
    /// Driven by continuations through one reusable awaitable (<see cref="_batchCore"/>) rather than a pooled async
    /// method: with <see cref="IoScheduling.ThreadPool"/> the send completes on another thread than the call, and a pooled
    /// box returned on another thread than the one that rented it misses the per-thread cache and is allocated.
    /// </para>
    /// </remarks>
    private ValueTask<int> EncryptAndSendAsync(ReadOnlySequence<byte> buffers, bool keep, CancellationToken ct)
    {
        _batch = buffers;
        _batchPosition = buffers.Start;
        _batchLeft = buffers.Length;
        // After kept records the batch's first record need not be small: those records start the send.
        _batchFirst = !_recordsKept;
        _batchKeeps = keep;
        _recordsKept = false;
        _batchRest = default;
        _batchToken = ct;
        _batchStep = BatchStep.NextRecord;
        _batchCore.Reset();
        short version = _batchCore.Version;
        _stream.SendToken = ct;
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
                        if (_batchKeeps)
                        {
                            // Queued for the send that follows (SendBeforeMoreAsync).
                            _recordsKept = true;
                            break;
                        }

                        if (AwaitBatchStep(_stream.SendBufferedAsync()))
                        {
                            return false;
                        }

                        break;
                    }

                    // Room for this record within the bound (always, when nothing is queued).
                    _batchStep = BatchStep.Write;
                    if (AwaitBatchStep(_stream.WaitUntilQueuedAtMostAsync(Math.Max(0, _maxBytesInFlight - _batchRecord.Length - RecordOverhead))))
                    {
                        return false;
                    }

                    break;

                case BatchStep.Write:
                    // Completes synchronously: the record only goes into blocks.
                    _batchStep = BatchStep.NextRecord;
                    if (_openSsl is { } session)
                    {
                        session.Write(_batchRecord.Span);
                    }
                    else if (AwaitBatchStep(_ssl!.WriteAsync(_batchRecord, _batchToken)))
                    {
                        return false;
                    }

                    _stream.Push(_sendThreshold);
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

    /// <summary>The next record's plaintext into <see cref="_batchRecord"/>; false when the batch is all written.</summary>
    private bool TakeRecord()
    {
        while (true)
        {
            if (_batchRest.IsEmpty)
            {
                if (_batchLeft == 0 || !_batch.TryGet(ref _batchPosition, out _batchRest))
                {
                    // All taken: what is staged is the last record.
                    _batchRecord = _staging.AsMemory(0, _staged);
                    _staged = 0;
                    return !_batchRecord.IsEmpty;
                }

                continue;
            }

            if (_staged == 0)
            {
                // Where it is, no copy: the batch's first record, a whole record, or all that is left.
                int direct = _batchFirst ? Math.Min(_batchRest.Length, FirstRecordPayload)
                    : _batchRest.Length >= RecordPayload ? RecordPayload
                    : _batchRest.Length == _batchLeft ? _batchRest.Length
                    : 0;
                _batchFirst = false;
                if (direct != 0)
                {
                    _batchRecord = _batchRest[..direct];
                    _batchRest = _batchRest[direct..];
                    _batchLeft -= direct;
                    return true;
                }
            }

            _staging ??= ArrayPool<byte>.Shared.Rent(RecordPayload);
            int take = Math.Min(_batchRest.Length, RecordPayload - _staged);
            _batchRest.Span[..take].CopyTo(_staging.AsSpan(_staged));
            _staged += take;
            _batchRest = _batchRest[take..];
            _batchLeft -= take;
            if (_staged == RecordPayload)
            {
                _batchRecord = _staging.AsMemory(0, _staged);
                _staged = 0;
                return true;
            }
        }
    }

    /// <summary>Forgets the batch (its blocks belong to the caller again).</summary>
    private void EndBatch()
    {
        _stream.SendToken = default;
        _batch = default;
        _batchPosition = default;
        _batchRest = default;
        _batchRecord = default;
        _batchToken = default;
        _batchLeft = 0;
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
