using System;
using System.Buffers;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Buffers;
using Falconet.Http.Http1;
using Falconet.Transport;

namespace Falconet.Http;

/// <summary>
/// Reads the body of the current request (Content-Length or chunked) out of the connection's input blocks.
/// One object per connection, reset for every request.
/// </summary>
public sealed class RequestBodyReader
{
    private readonly Http1Input _input;
    private readonly Http1OutputBuffer _output;
    private readonly SlabMemoryPool _pool;
    private readonly HttpLimits _limits;
    private readonly DataRateMonitor _rates;
    private HttpResponse? _response;
    private HttpRequest? _request;
    private RequestBodyKind _kind;
    private long _remaining;
    private ChunkedDecoder _decoder;
    private bool _completed = true;
    private bool _expectContinue;

    // The current request's body was not complete at its start: reading, draining or a fault may have changed the decoder,
    // the body's data rate, BytesRead, ContinueSent, Fault or Truncated, which the next Reset then clears. A request without a
    // body (complete at its start) can change none of them: every path that does runs only while the body is not complete.
    private bool _readable;

    // HTTP/2: the stream whose DATA frames are the body; the HTTP/1.1 fields above stay unused.
    private readonly Http2.Http2Stream? _stream;

    internal RequestBodyReader(Http1Input input, Http1OutputBuffer output, SlabMemoryPool pool, HttpLimits limits, DataRateMonitor rates)
    {
        _input = input;
        _output = output;
        _pool = pool;
        _limits = limits;
        _rates = rates;
    }

    internal RequestBodyReader(Http2.Http2Stream stream)
    {
        _stream = stream;
        _input = null!;
        _output = null!;
        _pool = null!;
        _limits = null!;
        _rates = null!;
    }

    /// <summary>True for the body of an HTTP/2 request.</summary>
    internal bool IsHttp2 => _stream is not null;

    /// <summary>True once every body byte of the current request has been read (always true without a body).</summary>
    public bool IsCompleted => _completed;

    /// <summary>Body bytes handed to the application so far for the current request.</summary>
    public long BytesRead { get; private set; }

    /// <summary>True when the request asked for 100 Continue and the interim response was sent.</summary>
    public bool ContinueSent { get; private set; }

    /// <summary>The error that made the body unreadable (malformed chunk, too large, cut short by the peer); the connection closes after it.</summary>
    internal BadHttpRequestException? Fault { get; private set; }

    /// <summary>True when the body ended early because the peer closed the connection.</summary>
    internal bool Truncated { get; private set; }

    internal void Attach(HttpResponse response) => _response = response;

    /// <summary>A new HTTP/2 request: <paramref name="ended"/> when its HEADERS carried END_STREAM (no body).</summary>
    internal void ResetForStream(bool ended)
    {
        _completed = ended;
        BytesRead = 0;
        ContinueSent = false;
        Fault = null;
        Truncated = false;
    }

    /// <summary>HTTP/2: the stream handed out <paramref name="count"/> body bytes.</summary>
    internal void AddBytesRead(int count) => BytesRead += count;

    /// <summary>HTTP/2: every body byte was read.</summary>
    internal void MarkCompleted() => _completed = true;

    /// <summary>HTTP/2: the interim 100 Continue was sent.</summary>
    internal void MarkContinueSent() => ContinueSent = true;

    /// <summary>The request whose trailer fields a chunked body's trailer section fills.</summary>
    internal void Attach(HttpRequest request) => _request = request;

    internal void Reset(RequestBodyKind kind, long contentLength, bool expectContinue)
    {
        _kind = kind;
        _remaining = kind == RequestBodyKind.ContentLength ? contentLength : 0;
        _completed = kind == RequestBodyKind.None || (kind == RequestBodyKind.ContentLength && contentLength == 0);
        _expectContinue = expectContinue && !_completed;
        if (_readable)
        {
            _decoder.Reset();
            _rates.ResetBody();
            BytesRead = 0;
            ContinueSent = false;
            Fault = null;
            Truncated = false;
        }

        _readable = !_completed;
    }

    /// <summary>
    /// Reads up to <paramref name="destination"/>.Length body bytes; 0 means the body is complete. Completes
    /// synchronously when the bytes are already buffered.
    /// </summary>
    /// <exception cref="BadHttpRequestException">The chunked framing is malformed (400), the body is too large (413), or the
    /// client closed the connection before the body was complete (400).</exception>
    public ValueTask<int> ReadAsync(Memory<byte> destination, CancellationToken cancellationToken = default)
    {
        if (_stream is not null)
        {
            return _completed ? new ValueTask<int>(0) : _stream.ReadBodyAsync(destination, cancellationToken);
        }

        if (Fault is not null)
        {
            return ValueTask.FromException<int>(Fault);
        }

        if (_completed || destination.IsEmpty)
        {
            return new ValueTask<int>(0);
        }

        if (!_expectContinue)
        {
            int read = ReadBuffered(destination.Span);
            if (read > 0 || _completed)
            {
                return new ValueTask<int>(read);
            }
        }

        return ReadSlowAsync(destination, cancellationToken);
    }

    /// <summary>
    /// Reads what is already buffered, without waiting for the peer: false when the read would have to wait (nothing is
    /// consumed then, and no read is left pending). For a caller that blocks and must not block where the bytes arrive.
    /// </summary>
    /// <exception cref="BadHttpRequestException">As <see cref="ReadAsync"/>.</exception>
    internal bool TryReadWithoutWaiting(Span<byte> destination, out int read)
    {
        read = 0;
        if (_stream is not null)
        {
            return _completed || destination.IsEmpty || _stream.TryReadBodyWithoutWaiting(destination, out read);
        }

        if (Fault is not null)
        {
            throw Fault;
        }

        if (_completed || destination.IsEmpty)
        {
            return true;
        }

        if (_expectContinue)
        {
            return false;
        }

        read = ReadBuffered(destination);
        return read > 0 || _completed;
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<int> ReadSlowAsync(Memory<byte> destination, CancellationToken cancellationToken)
    {
        if (_expectContinue)
        {
            _expectContinue = false;
            if (_input.Buffered == 0 && _response is { HasStarted: false })
            {
                _output.Write(HttpStatusLines.Continue);
                await _output.FlushAsync(cancellationToken).ConfigureAwait(false);
                ContinueSent = true;
            }
        }

        while (true)
        {
            int read = ReadBuffered(destination.Span);
            if (read > 0 || _completed)
            {
                return read;
            }

            int received;
            try
            {
                received = await ReceiveBodyAsync(cancellationToken).ConfigureAwait(false);
            }
            catch (ConnectionResetException exception)
            {
                throw Truncate(exception);
            }

            if (received == 0)
            {
                throw Truncate(null);
            }
        }
    }

    /// <summary>
    /// Records that the peer closed (or reset) the connection before the body was complete. The request is malformed
    /// rather than the application failing, so the error is a 400 that the connection logs as a bad request; every
    /// later read throws it again.
    /// </summary>
    private BadHttpRequestException Truncate(Exception? innerException)
    {
        Truncated = true;
        if (_rates.Violation == ConnectionCloseReason.MinRequestBodyDataRate)
        {
            // The heartbeat stopped the receive: the body came too slowly, and the client is told so (RFC 9110 15.5.9).
            Fault = new BadHttpRequestException(RequestRejectionReason.RequestBodyTooSlow, innerException);
            return Fault;
        }

        Fault = new BadHttpRequestException(RequestRejectionReason.UnexpectedEndOfBody, innerException);
        return Fault;
    }

    /// <summary>Receives more body bytes; a receive that has to wait for the client counts toward the minimum body data rate.</summary>
    private ValueTask<int> ReceiveBodyAsync(CancellationToken cancellationToken)
    {
        ValueTask<int> receive = _input.ReceiveAsync(cancellationToken);
        return receive.IsCompleted ? receive : AwaitTimedAsync(receive);
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<int> AwaitTimedAsync(ValueTask<int> receive)
    {
        _rates.BodyWaitStarted();
        int received = 0;
        try
        {
            received = await receive.ConfigureAwait(false);
            return received;
        }
        finally
        {
            _rates.BodyWaitEnded(received);
        }
    }

    /// <summary>Copies or decodes body bytes already received; never waits.</summary>
    private int ReadBuffered(Span<byte> destination)
    {
        if (_input.Buffered == 0)
        {
            return 0;
        }

        ReadOnlySequence<byte> buffered = _input.GetSequence();
        if (_kind == RequestBodyKind.ContentLength)
        {
            int count = (int)Math.Min(Math.Min(_remaining, buffered.Length), destination.Length);
            ReadOnlySequence<byte> slice = buffered.Slice(0, count);
            slice.CopyTo(destination);
            _input.Consume(slice.End);
            _remaining -= count;
            BytesRead += count;
            _completed = _remaining == 0;
            return count;
        }

        var reader = new SequenceReader<byte>(buffered);
        var trailers = new RequestTrailersHandler(_request!);
        int written;
        try
        {
            long before;
            bool done;
            do
            {
                before = reader.Consumed;
                written = _decoder.Decode(ref trailers, ref reader, destination, _limits, out done);
            }
            while (written == 0 && !done && reader.Consumed != before && !reader.End);

            _completed = done;
        }
        catch (BadHttpRequestException exception)
        {
            Fault = exception;
            throw;
        }

        _input.Consume(reader.Position);
        BytesRead += written;
        return written;
    }

    /// <summary>
    /// True when the unread rest of the body can be drained to keep the connection: the client is not waiting
    /// for 100 Continue, and a Content-Length remainder is within <paramref name="limit"/>.
    /// </summary>
    internal bool CanDrain(long limit)
    {
        if (_completed)
        {
            return true;
        }

        if (Fault is not null || Truncated || (_expectContinue && _input.Buffered == 0))
        {
            return false;
        }

        return _kind != RequestBodyKind.ContentLength || _remaining <= limit;
    }

    /// <summary>Discards the unread rest of the body; false when it passes <paramref name="limit"/> or is broken (close instead).</summary>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    internal async ValueTask<bool> DrainAsync(long limit, CancellationToken cancellationToken)
    {
        _expectContinue = false;
        long drained = 0;
        MemoryBlock? scratch = null;
        try
        {
            while (!_completed)
            {
                long progress;
                if (_kind == RequestBodyKind.ContentLength)
                {
                    ReadOnlySequence<byte> buffered = _input.GetSequence();
                    progress = Math.Min(_remaining, buffered.Length);
                    _input.Consume(buffered.GetPosition(progress));
                    _remaining -= progress;
                    _completed = _remaining == 0;
                }
                else
                {
                    scratch ??= _pool.Rent();
                    try
                    {
                        progress = ReadBuffered(scratch.Memory.Span);
                    }
                    catch (BadHttpRequestException)
                    {
                        return false;
                    }
                }

                drained += progress;
                if (_completed)
                {
                    break;
                }

                if (drained > limit)
                {
                    return false;
                }

                if (progress == 0 && await ReceiveBodyAsync(cancellationToken).ConfigureAwait(false) == 0)
                {
                    Truncated = true;
                    return false;
                }
            }

            return true;
        }
        finally
        {
            if (scratch is not null)
            {
                _pool.Return(scratch);
            }
        }
    }
}
