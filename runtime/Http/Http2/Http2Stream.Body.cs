using System;
using System.Buffers;
using System.Diagnostics;
using System.IO;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Buffers;

namespace Falconet.Http.Http2;

// The request body: DATA payloads the read loop copied in, read by the handler through RequestBodyReader, with the
// receive windows given back as it reads.
internal sealed partial class Http2Stream
{
    private readonly BlockChain _received;
    private readonly Http2Signal _readSignal = new();
    private int _receiveWindow;
    private int _consumedUnacknowledged;
    private long _receivedTotal;
    private long _expectedLength;
    private BadHttpRequestException? _bodyFault;
    private bool _expectContinue;
    private bool _continueSent;

    /// <summary>True once the client's END_STREAM arrived (the request, and its body, are complete).</summary>
    public bool RequestEnded => State is Http2StreamState.HalfClosedRemote
        || (State == Http2StreamState.Closed && Closure == Http2StreamClosure.Ended);

    /// <summary>Sets what the request head said about its body (on the read loop, before the handler starts).</summary>
    public void SetBody(long expectedLength, bool expectContinue)
    {
        _expectedLength = expectedLength;
        _expectContinue = expectContinue;
    }

    /// <summary>True unless a Content-Length was sent and the body received differs from it (checked at the end of the request).</summary>
    public bool BodyLengthMatches => _expectedLength < 0 || _receivedTotal == _expectedLength;

    /// <summary>What the client may still send on this stream before the server's next WINDOW_UPDATE.</summary>
    public int ReceiveWindow => _receiveWindow;

    /// <summary>
    /// A DATA frame's payload for this stream (on the read loop, under the lock, the frame's whole length already taken
    /// from the windows): the data bytes are kept for the handler, the padding goes back to the windows at once. False when
    /// the body is malformed (more than its Content-Length); the caller resets the stream.
    /// </summary>
    public bool ReceiveDataLocked(ReadOnlySequence<byte> data, int frameLength, bool endStream)
    {
        _receiveWindow -= frameLength;
        _receivedTotal += data.Length;
        if (_expectedLength >= 0 && (_receivedTotal > _expectedLength || (endStream && _receivedTotal != _expectedLength)))
        {
            // RFC 9113 section 8.1.1: a Content-Length that differs from the sum of the DATA payloads is malformed.
            return false;
        }

        if (!_appRunning)
        {
            // Drained (the handler is done): straight back to the windows, as long as the drain size lasts.
            _connection.CreditLocked(frameLength);
            _receiveWindow += frameLength;
            _rates.BodyWaitEnded((int)data.Length);
            if (_receivedTotal > _drainLimit && !endStream)
            {
                StopLocked(Http2ErrorCode.NoError);
                return true;
            }

            _rates.BodyWaitStarted();
        }
        else
        {
            foreach (ReadOnlyMemory<byte> segment in data)
            {
                _received.Write(segment.Span);
            }

            int padding = frameLength - (int)data.Length;
            if (padding > 0)
            {
                CreditLocked(padding);
            }
        }

        if (_receivedTotal > _settings.Limits.MaxRequestBodySize && _bodyFault is null)
        {
            _bodyFault = new BadHttpRequestException(RequestRejectionReason.BodyTooLarge);
        }

        WakeReaderLocked();
        return true;
    }

    /// <summary>
    /// Wakes the handler's body read, if one waits (under the lock, on the read loop): it continues once the read batch is
    /// handled and the lock released, on the read loop's thread, where the connection runs its handlers.
    /// </summary>
    private void WakeReaderLocked()
    {
        if (_readSignal.Detach())
        {
            _connection.WakeAfterBatch(this);
        }
    }

    /// <summary>Continues the body read <see cref="WakeReaderLocked"/> woke, on this thread (the read loop, after its batch, no lock held).</summary>
    public void ContinueRead()
    {
        Debug.Assert(!_output.Gate.IsHeldByCurrentThread);
        _readSignal.WakeDetached();
    }

    /// <summary>Reads request body bytes (RequestBodyReader.ReadAsync on HTTP/2).</summary>
    public ValueTask<int> ReadBodyAsync(Memory<byte> destination, CancellationToken cancellationToken)
    {
        if (destination.IsEmpty)
        {
            return new ValueTask<int>(0);
        }

        int read = TryReadBody(destination.Span, out bool wait, out bool flush);
        if (flush)
        {
            _output.Flush();
        }

        return wait ? ReadBodySlowAsync(destination, cancellationToken) : new ValueTask<int>(read);
    }

    /// <summary>Reads buffered body bytes; false, with nothing consumed, when the read would have to wait for DATA.</summary>
    internal bool TryReadBodyWithoutWaiting(Span<byte> destination, out int read)
    {
        read = TryReadBody(destination, out bool wait, out bool flush);
        if (flush)
        {
            _output.Flush();
        }

        return !wait;
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<int> ReadBodySlowAsync(Memory<byte> destination, CancellationToken cancellationToken)
    {
        while (true)
        {
            ValueTask waiting;
            bool sendContinue = false;
            lock (_output.Gate)
            {
                if (_received.Length != 0 || RequestEnded || _bodyFault is not null || IsReset)
                {
                    waiting = default;
                }
                else
                {
                    if (_expectContinue && !_continueSent && !Response.HasStarted && _receivedTotal == 0)
                    {
                        // RFC 9110 section 10.1.1: the client waits for 100 Continue before it sends the body.
                        _continueSent = true;
                        Body.MarkContinueSent();
                        sendContinue = true;
                    }

                    _rates.BodyWaitStarted();
                    waiting = _readSignal.Arm();
                }
            }

            if (sendContinue)
            {
                WriteContinue();
            }

            if (!waiting.IsCompleted)
            {
                long before = _receivedTotal;
                using (cancellationToken.CanBeCanceled ? cancellationToken.UnsafeRegister(static state => ((Http2Stream)state!).CancelRead(), this) : default)
                {
                    try
                    {
                        await waiting.ConfigureAwait(false);
                    }
                    catch (Exception) when (!cancellationToken.IsCancellationRequested)
                    {
                        // Reset, or the connection ended: the read below says so as HTTP/1.1 would (UnexpectedEndOfBody).
                    }
                    finally
                    {
                        _rates.BodyWaitEnded((int)Math.Min(int.MaxValue, Volatile.Read(ref _receivedTotal) - before));
                    }
                }

                cancellationToken.ThrowIfCancellationRequested();
            }

            int read = TryReadBody(destination.Span, out bool wait, out bool flush);
            if (flush)
            {
                _output.Flush();
            }

            if (!wait)
            {
                return read;
            }
        }
    }

    private void CancelRead()
    {
        lock (_output.Gate)
        {
            _readSignal.Fail(new OperationCanceledException());
        }
    }

    /// <summary>Copies what has arrived; wait: nothing has and more will; flush: a WINDOW_UPDATE was written.</summary>
    private int TryReadBody(Span<byte> destination, out bool wait, out bool flush)
    {
        lock (_output.Gate)
        {
            wait = false;
            flush = false;
            if (_bodyFault is not null)
            {
                throw _bodyFault;
            }

            long buffered = _received.Length;
            if (buffered != 0)
            {
                int count = (int)Math.Min(buffered, destination.Length);
                ReadOnlySequence<byte> slice = _received.GetSequence().Slice(0, count);
                slice.CopyTo(destination);
                _received.Consume(slice.End);
                Body.AddBytesRead(count);
                flush = CreditLocked(count);
                if (RequestEnded && _received.Length == 0)
                {
                    Body.MarkCompleted();
                }

                return count;
            }

            if (RequestEnded)
            {
                Body.MarkCompleted();
                return 0;
            }

            if (IsReset)
            {
                // The client reset the stream (or the connection ended) before the body was complete.
                _bodyFault = new BadHttpRequestException(RequestRejectionReason.UnexpectedEndOfBody,
                    new IOException("The stream was reset before the request body was complete."));
                throw _bodyFault;
            }

            wait = true;
            return 0;
        }
    }

    /// <summary>
    /// Gives <paramref name="count"/> consumed bytes back to the client: to the connection window, and to the stream's own
    /// while the request goes on, each with a WINDOW_UPDATE once half of its window is waiting (under the lock). True when a
    /// frame was written.
    /// </summary>
    private bool CreditLocked(int count)
    {
        bool wrote = _connection.CreditLocked(count);
        if (RequestEnded || State == Http2StreamState.Closed)
        {
            return wrote;
        }

        _consumedUnacknowledged += count;
        if (_consumedUnacknowledged >= _connection.StreamWindowUpdateThreshold && !_output.IsClosed)
        {
            _output.WriteWindowUpdate(Id, _consumedUnacknowledged);
            _receiveWindow += _consumedUnacknowledged;
            _consumedUnacknowledged = 0;
            return true;
        }

        return wrote;
    }

    /// <summary>Drops the body bytes nobody read and gives them back to the connection window (under the lock).</summary>
    private void DiscardReceivedLocked()
    {
        long unread = _received.Length;
        if (unread != 0)
        {
            _received.Consume(_received.GetSequence().End);
            _connection.CreditLocked((int)unread);
        }
    }

    /// <summary>
    /// The heartbeat found the body arriving below the minimum rate (under the lock): the handler's read fails with 408; a
    /// body drained after the handler is done stops there (RST_STREAM NO_ERROR).
    /// </summary>
    public void FailBodyTooSlowLocked()
    {
        if (!_appRunning)
        {
            StopLocked(Http2ErrorCode.NoError);
            return;
        }

        _bodyFault ??= new BadHttpRequestException(RequestRejectionReason.RequestBodyTooSlow);
        _readSignal.Fail(_bodyFault);
    }
}
