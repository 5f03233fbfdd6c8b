using System;
using System.Buffers;
using System.IO;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Buffers;
using Falconet.Http.Http1;

namespace Falconet.Http;

/// <summary>
/// The response to the current request: status, headers and body. The body is buffered until the handler
/// completes (then Content-Length is set from it) or flushes, or until buffered output passes the
/// write-behind bound (then it streams, chunked on HTTP/1.1). One object per connection, reset per request.
/// </summary>
public partial class HttpResponse
{
    private readonly Http1OutputBuffer _output;
    private readonly BlockChain _staged;
    private readonly BlockChainWriter _stagedWriter;
    private int _statusCode = 200;
    private ResponseState _state;
    private ResponseFraming _framing;
    private long? _declaredLength;
    private long _bodyBytes;
    private bool _isHead;
    private bool _http10;

    // Body bytes of a response not started yet that wait in the remembered head's spare room (Http1ResponseHead.SpareRoom),
    // right behind the head they will most likely go out with: then head and body leave in one copy. Only while nothing is
    // staged; any other use of the body moves them to the staged blocks first (SpillPendingBody).
    private int _pendingBody;

    internal HttpResponse(ResponseHeaders headers, Http1OutputBuffer output, SlabMemoryPool pool)
    {
        Headers = headers;
        _output = output;
        _staged = new BlockChain(pool);
        _stagedWriter = new BlockChainWriter(_staged);
        BodyWriter = new ResponseBodyWriter(this);
        Body = new ResponseBodyStream(this);
    }

    /// <summary>The status code (200 by default), 200-599; settable until the response has started.</summary>
    /// <exception cref="ArgumentOutOfRangeException">
    /// The code is outside 200-599. An informational (1xx) status is never a final status: the server sends
    /// 100 Continue itself and does not support protocol upgrades (101).
    /// </exception>
    public int StatusCode
    {
        get => _statusCode;
        set
        {
            ThrowIfStarted();
            if ((uint)(value - 200) > 399)
            {
                ThrowInvalidStatusCode(value);
            }

            _statusCode = value;
        }
    }

    /// <summary>
    /// Whether the synchronous <see cref="Stream.Write(byte[], int, int)"/>, <see cref="Stream.WriteByte"/> and
    /// <see cref="Stream.Flush"/> of <see cref="Body"/> are allowed (set for every request from the server's
    /// FalconetServerOptions.AllowSynchronousWrites, false by default).
    /// When false they throw <see cref="NotSupportedException"/>. When true they buffer like <see cref="Write"/>
    /// and never wait: the write-behind bound does not apply to them, since a synchronous call cannot wait for
    /// the socket without blocking the thread the handler runs on.
    /// </summary>
    public bool AllowSynchronousWrites { get; set; }

    /// <summary>The response headers (generated collection); changes after the response has started are not sent.</summary>
    public ResponseHeaders Headers { get; }

    /// <summary>The Content-Length header; left unset, it is computed from the body when the handler completes without flushing.</summary>
    public long? ContentLength
    {
        get => Headers.ContentLength;
        set => Headers.ContentLength = value;
    }

    /// <summary>True once the status line and headers have been written to the connection's output.</summary>
    public bool HasStarted => _state != ResponseState.NotStarted;

    /// <summary>Body bytes the application has written so far.</summary>
    public long BytesWritten => _bodyBytes;

    /// <summary>A buffer writer over the body (e.g. for Utf8JsonWriter); Advance never waits, its WaitAsync and FlushAsync apply the write-behind bound.</summary>
    public ResponseBodyWriter BodyWriter { get; }

    /// <summary>The body as a write-only <see cref="System.IO.Stream"/> (one object per connection); synchronous writes need <see cref="AllowSynchronousWrites"/>.</summary>
    public Stream Body { get; }

    /// <summary>Cancelled when the server stops (the connection's shutdown signal).</summary>
    internal CancellationToken Shutdown { get; set; }

    /// <summary>True when the connection stays open after this response.</summary>
    internal bool KeepAlive { get; set; }

    /// <summary>
    /// Appends body bytes. Completes at once and never waits: the bytes are buffered, and sent when the handler
    /// completes, when it flushes, or by the next <see cref="WriteAsync"/> once buffered output passes the
    /// write-behind bound. A body written only with this method is buffered whole.
    /// </summary>
    /// <exception cref="InvalidOperationException">The bytes would pass the declared Content-Length (nothing is written), the status has no body, or a head that starts here cannot be written.</exception>
    public void Write(ReadOnlySpan<byte> data)
    {
        if (data.IsEmpty)
        {
            return;
        }

        CountBodyBytes(data.Length);
        if (_isHead)
        {
            return;
        }

        if (_stream is not null)
        {
            Http2Write(data);
            return;
        }

        if (_state == ResponseState.NotStarted)
        {
            if (_staged.Length == 0)
            {
                Span<byte> room = _head.SpareRoom;
                int pending = _pendingBody;
                if ((uint)data.Length <= (uint)(room.Length - pending))
                {
                    data.CopyTo(room[pending..]);
                    _pendingBody = pending += data.Length;
                    if (pending + _output.Buffered >= _output.Limit)
                    {
                        Start(final: false);
                    }

                    return;
                }

                SpillPendingBody();
            }

            _stagedWriter.Write(data);
            if (_staged.Length + _output.Buffered >= _output.Limit)
            {
                Start(final: false);
            }

            return;
        }

        CommitStaged();
        WriteFramed(data);
    }

    /// <summary>Moves body bytes waiting in the remembered head's spare room to the staged blocks (see <c>_pendingBody</c>).</summary>
    private void SpillPendingBody()
    {
        int pending = _pendingBody;
        if (pending != 0)
        {
            _pendingBody = 0;
            _stagedWriter.Write(_head.SpareRoom[..pending]);
        }
    }

    /// <summary>
    /// Appends body bytes and, when buffered output is at or above the write-behind bound, waits until the
    /// transport has sent it, so a slow reader holds the server's buffered output within the bound. On HTTP/1.1 a write
    /// of at least 32 KiB (over TLS, also one of at least 4 KiB that ends the declared Content-Length) to a response that
    /// starts here or has started is sent straight from <paramref name="data"/>,
    /// after what is buffered, and completes once the transport no longer needs the bytes; <paramref name="data"/> may be
    /// reused as soon as the returned task completes, as after any write.
    /// </summary>
    public ValueTask WriteAsync(ReadOnlyMemory<byte> data, CancellationToken cancellationToken = default)
    {
        if (_stream is not null)
        {
            return Http2WriteAsync(data, cancellationToken);
        }

        // A large write is sent from the caller's memory (WriteSentAloneAsync) rather than copied into the output blocks
        // (and, over TLS, again into staging records); so is, over TLS, a smaller one that ends the declared body
        // (TransportConnection.MinLastWriteFromCallerMemory).
        if ((data.Length >= MinWriteSentAlone || (data.Length >= _output.MinLastWriteFromCallerMemory && EndsDeclaredBody(data.Length)))
            && IsSentAlone(data.Length))
        {
            return WriteSentAloneAsync(data, cancellationToken);
        }

        Write(data.Span);
        return _output.IsOverLimit ? _output.FlushAsync(cancellationToken) : default;
    }

    /// <summary>
    /// Starts the response (chunked on HTTP/1.1 and close-delimited on HTTP/1.0 unless Content-Length is set)
    /// and sends everything buffered. A flush made before the handler first goes asynchronous is held instead: its bytes
    /// leave in the connection's send once the handler returns (with the other responses of a pipelined batch), or as
    /// soon as the handler goes asynchronous.
    /// </summary>
    public ValueTask FlushAsync(CancellationToken cancellationToken = default)
    {
        if (_stream is not null)
        {
            return Http2FlushAsync(cancellationToken);
        }

        if (_state == ResponseState.Completed)
        {
            throw new InvalidOperationException("The response has completed.");
        }

        if (_state == ResponseState.NotStarted)
        {
            Start(final: false);
        }
        else
        {
            CommitStaged();
        }

        return _output.FlushOrHoldAsync(cancellationToken);
    }

    /// <summary>
    /// Completes the response now and sends it, as if the handler had returned: Content-Length is computed from a body
    /// that is still buffered, a chunked body gets its last chunk. Nothing can be written afterwards; the handler may go
    /// on with other work (callbacks that must run once the client has the response), and the connection moves on to
    /// the next request only when it returns. Calling it again only waits for the send. The send is held as the
    /// one of <see cref="FlushAsync"/> is.
    /// </summary>
    /// <exception cref="InvalidOperationException">The body does not match a declared Content-Length, or the head cannot be written.</exception>
    public ValueTask CompleteAsync(CancellationToken cancellationToken = default)
    {
        if (_stream is not null)
        {
            return Http2CompleteAsync(cancellationToken);
        }

        if (_state != ResponseState.Completed)
        {
            Complete();
        }

        return _output.FlushOrHoldAsync(cancellationToken);
    }

    /// <summary>True once the response is complete (<see cref="CompleteAsync"/>, or the handler returned).</summary>
    public bool HasCompleted => _state == ResponseState.Completed;

    /// <summary>Memory for the body writer: the free space of the staged body blocks.</summary>
    internal Memory<byte> GetBodyMemory(int sizeHint)
    {
        ThrowIfCompleted();
        SpillPendingBody();
        return _stagedWriter.GetMemory(sizeHint);
    }

    /// <summary>Called by the body writer after the application advanced it by <paramref name="count"/> bytes.</summary>
    internal void AdvanceBody(int count)
    {
        if (count == 0)
        {
            return;
        }

        CountBodyBytes(count);
        _stagedWriter.Advance(count);
        if (_isHead)
        {
            _staged.Consume(_staged.GetSequence().End);
            return;
        }

        if (_stream is not null)
        {
            Http2AfterStaging();
            return;
        }

        if (_staged.Length + _output.Buffered >= _output.Limit)
        {
            if (_state == ResponseState.NotStarted)
            {
                Start(final: false);
            }
            else
            {
                CommitStaged();
            }
        }
    }

    /// <summary>Waits for the transport when buffered output is at or above the write-behind bound.</summary>
    internal ValueTask WaitForWriteBehindAsync(CancellationToken cancellationToken)
        => _stream is not null ? Http2WaitForRoomAsync(cancellationToken) : _output.IsOverLimit ? _output.FlushAsync(cancellationToken) : default;

    /// <summary>True when a write of <paramref name="count"/> bytes brings the body to its declared Content-Length.</summary>
    private bool EndsDeclaredBody(int count)
        => (_state == ResponseState.NotStarted ? Headers.ContentLength : _declaredLength) == _bodyBytes + count;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void CountBodyBytes(int count)
    {
        ThrowIfCompleted();
        if (HttpStatusLines.IsBodyless(_statusCode))
        {
            ThrowBodyless(_statusCode);
        }

        // Checked before the bytes are buffered anywhere, whether or not the head is out: nothing past the
        // declared length may reach the wire, where it would be read as the start of the next response.
        long total = _bodyBytes + count;
        long? declared = _state == ResponseState.NotStarted ? Headers.ContentLength : _declaredLength;
        if (total > declared)
        {
            ThrowPastContentLength(declared.GetValueOrDefault(), total);
        }

        _bodyBytes = total;
    }

    private static void ThrowBodyless(int statusCode)
        => throw new InvalidOperationException($"A response with status {statusCode} has no body.");

    private static void ThrowPastContentLength(long declared, long total)
        => throw new InvalidOperationException(
            $"Writing {total} body bytes would pass the declared Content-Length of {declared} bytes.");

    private static void ThrowInvalidStatusCode(int value)
        => throw new ArgumentOutOfRangeException(nameof(value), value, value is >= 100 and < 200
            ? "An informational (1xx) status cannot be a final status: Falconet sends 100 Continue itself and does not support upgrades."
            : "A final HTTP status code is between 200 and 599.");

    private void ThrowIfStarted()
    {
        if (_state != ResponseState.NotStarted)
        {
            throw new InvalidOperationException("The response has started: its status and headers are sent.");
        }
    }

    private void ThrowIfCompleted()
    {
        if (_state == ResponseState.Completed)
        {
            throw new InvalidOperationException("The response has completed.");
        }
    }

    private enum ResponseState : byte
    {
        NotStarted,
        Started,
        Completed,
    }

    private enum ResponseFraming : byte
    {
        None,
        ContentLength,
        Chunked,
        CloseDelimited,
    }
}
