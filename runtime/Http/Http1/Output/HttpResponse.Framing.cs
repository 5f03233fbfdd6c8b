using System;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Http.Http1;
using Microsoft.Extensions.Primitives;

namespace Falconet.Http;

/// <summary>How the response turns into bytes: the head, the body framing and completion.</summary>
public partial class HttpResponse
{
    private static readonly StringValues s_server = new("Falconet");
    private static readonly StringValues s_chunked = new("chunked");
    private static readonly StringValues s_close = new("close");
    private static readonly StringValues s_keepAlive = new("keep-alive");
    private static readonly StringValues s_upgrade = new("Upgrade");

    // A buffered body up to this size is written with the head (one copy); a larger one follows it.
    private const int MaxBodyWithHead = 1024;

    // A WriteAsync of at least this many bytes is sent from the caller's memory (WriteSentAloneAsync) rather than copied
    // into the output blocks (and, over TLS, again into staging records). Below it the copies cost less than the send of
    // its own that the write takes, which in a pipelined batch, or for a handler that writes its body in pieces, would
    // otherwise go with one send for several.
    private const int MinWriteSentAlone = 32 * 1024;

    private readonly Http1ResponseHead _head = new();

    internal void Reset(bool isHead, bool http10, bool keepAlive)
    {
        Headers.Clear();
        if (_staged.Length != 0)
        {
            _staged.Consume(_staged.GetSequence().End);
        }

        _pendingBody = 0;
        _statusCode = 200;
        _state = ResponseState.NotStarted;
        _framing = ResponseFraming.None;
        _declaredLength = null;
        _bodyBytes = 0;
        AllowSynchronousWrites = false;
        _isHead = isHead;
        _http10 = http10;
        KeepAlive = keepAlive;
        _http2Ending = false;
        _trailers?.Clear();
    }

    /// <summary>
    /// Writes the head of a 101 Switching Protocols with the headers the handler set and "Connection: Upgrade", and ends the
    /// response: the connection then carries the new protocol, and closes when the handler returns.
    /// </summary>
    internal void StartSwitchingProtocols()
    {
        ThrowIfStarted();
        _statusCode = 101;
        Headers.Connection = s_upgrade;
        Start(final: true);
        _state = ResponseState.Completed;
        KeepAlive = false;
    }

    /// <summary>True when the body is delimited by closing the connection (HTTP/1.0 without Content-Length).</summary>
    internal bool IsCloseDelimited => _framing == ResponseFraming.CloseDelimited;

    /// <summary>
    /// Finishes the response after the handler returned: sets Content-Length from the buffered body when the
    /// response has not started, or writes the last chunk when it streams.
    /// </summary>
    /// <exception cref="InvalidOperationException">The body does not match a declared Content-Length.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void Complete()
    {
        // The common case inline, in the caller: an HTTP/1.1 response not started, without a declared length.
        if (_stream is null && _state == ResponseState.NotStarted && Headers.ContentLength is null && TryStartFinalFromRememberedHead())
        {
            _state = ResponseState.Completed;
            return;
        }

        CompleteOther();
    }

    /// <summary><see cref="Complete"/> for every response <see cref="TryStartFinalFromRememberedHead"/> does not start.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void CompleteOther()
    {
        if (_stream is not null)
        {
            Http2Complete();
            return;
        }

        if (_state == ResponseState.NotStarted)
        {
            long? declared = Headers.ContentLength;
            if (declared is not null && declared != _bodyBytes && !_isHead && !HttpStatusLines.IsBodyless(_statusCode))
            {
                throw new InvalidOperationException(
                    $"The handler wrote {_bodyBytes} body bytes but declared Content-Length {declared}.");
            }

            Start(final: true);
        }
        else if (_state == ResponseState.Started)
        {
            CommitStaged();
            if (_framing == ResponseFraming.Chunked && !_isHead)
            {
                _output.Write(ChunkedResponseEncoder.LastChunk);
            }
            else if (_framing == ResponseFraming.ContentLength && !_isHead && _bodyBytes != _declaredLength)
            {
                throw new InvalidOperationException(
                    $"The handler wrote {_bodyBytes} body bytes but declared Content-Length {_declaredLength}.");
            }
        }

        _state = ResponseState.Completed;
    }

    /// <summary>
    /// Replaces a response that has not started with an empty one of <paramref name="statusCode"/>
    /// (Content-Length: 0, plus Connection: close unless the connection stays open). False once started.
    /// </summary>
    internal bool TryWriteEmptyResponse(int statusCode, bool keepAlive)
    {
        if (_stream is not null)
        {
            return Http2WriteEmptyResponse(statusCode);
        }

        if (_state != ResponseState.NotStarted)
        {
            return false;
        }

        Reset(_isHead, _http10, keepAlive);
        _statusCode = statusCode;
        Headers.ContentLength = 0;
        Start(final: true);
        _state = ResponseState.Completed;
        return true;
    }

    /// <summary>
    /// Writes the status line and headers into the output, then the body buffered so far. All or nothing: when
    /// the head cannot be written (a header value with CR or LF, say), its bytes are taken back out of the
    /// output and the framing headers the decision changed are restored, so the response has not started and
    /// the connection can still answer it with a clean error status.
    /// </summary>
    private void Start(bool final)
    {
        // Server and Date need no restoring: they are added only when absent, as a retry would add them (a Date at
        // most a second older than a fresh one). The head written below may be remembered over body bytes waiting behind
        // the last one: they move to the staged blocks first.
        SpillPendingBody();
        ResponseHeaders headers = Headers;
        StringValues transferEncoding = headers.TransferEncoding;
        StringValues connection = headers.Connection;
        long? contentLength = headers.ContentLength;
        bool keepAlive = KeepAlive;
        long mark = _output.Buffered;
        ResponseFraming framing;
        ReadOnlySpan<byte> body = default;
        bool bodyWithHead;
        try
        {
            framing = PrepareHead(final);

            // A small body buffered whole goes out with the head, in the same copy into the output.
            bodyWithHead = framing == ResponseFraming.ContentLength && !_isHead && _staged.TryGetSingleSpan(out body)
                && body.Length <= MaxBodyWithHead;
            _head.Write(_output.Writer, _statusCode, headers, bodyWithHead ? body : default);
        }
        catch
        {
            _output.RollBackTo(mark);
            headers.TransferEncoding = transferEncoding;
            headers.Connection = connection;
            headers.ContentLength = contentLength;
            KeepAlive = keepAlive;
            throw;
        }

        _framing = framing;
        _declaredLength = framing == ResponseFraming.ContentLength ? headers.ContentLength : null;
        _state = ResponseState.Started;
        if (bodyWithHead)
        {
            _staged.ConsumeAll();
            _output.TrackPeak();
        }
        else
        {
            CommitStaged();
        }
    }

    /// <summary>
    /// <see cref="Start"/> of a final response in one pass, for the common framing: a status with a body, neither
    /// Content-Length, Transfer-Encoding nor Connection set by the application, an HTTP/1.1 connection that stays open and
    /// a server that is not stopping, and a body buffered whole in one block of at most <see cref="MaxBodyWithHead"/>
    /// bytes. The head is then what <see cref="PrepareHead"/> decides, set here as it sets it (the default headers and the
    /// body's length); when it is the head the connection wrote last, it goes out with the body in one copy. False when
    /// any of that does not hold, with Content-Length unset again (Server and Date need no restoring, as in
    /// <see cref="Start"/>): <see cref="Start"/> then decides as always.
    /// </summary>
    private bool TryStartFinalFromRememberedHead()
    {
        ResponseHeaders headers = Headers;
        ReadOnlySpan<byte> body = default;
        if (_isHead || _http10 || !KeepAlive || HttpStatusLines.IsBodyless(_statusCode) || headers.TransferEncoding.Count != 0
            || headers.Connection.Count != 0 || Shutdown.IsCancellationRequested
            || (_staged.Length != 0 && (!_staged.TryGetSingleSpan(out body) || body.Length > MaxBodyWithHead)))
        {
            return false;
        }

        AddDefaultHeaders(headers);
        headers.ContentLength = _bodyBytes;

        // A body waiting behind the remembered head goes out with it in the same copy (nothing is staged then).
        if (!_head.TryWriteRemembered(_output.Writer, _statusCode, headers, body, _pendingBody))
        {
            headers.ContentLength = null;
            return false;
        }

        _framing = ResponseFraming.ContentLength;
        _declaredLength = _bodyBytes;
        _state = ResponseState.Started;
        _pendingBody = 0;
        if (!body.IsEmpty)
        {
            _staged.ConsumeAll();
        }

        _output.TrackPeak();
        return true;
    }

    /// <summary>Adds Server and Date when the application did not set them.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void AddDefaultHeaders(ResponseHeaders headers)
    {
        if (headers.Server.Count == 0)
        {
            headers.Server = s_server;
        }

        if (headers.Date.Count == 0)
        {
            headers.Date = DateHeaderValues.Value;
        }
    }

    /// <summary>Adds the default headers and decides the body framing, setting the framing and Connection headers to match.</summary>
    private ResponseFraming PrepareHead(bool final)
    {
        ResponseHeaders headers = Headers;
        AddDefaultHeaders(headers);
        ResponseFraming framing;
        if (HttpStatusLines.IsBodyless(_statusCode))
        {
            // RFC 9110 section 8.6 and RFC 9112 section 6.1: no Content-Length or Transfer-Encoding in a 1xx or
            // 204 response. A 304 keeps a Content-Length the application set: it announces the length of the
            // representation a 200 would carry (RFC 9110 section 15.4.5), not a body of this response, so it is
            // never computed. Transfer-Encoding is dropped there too, since this response has no body to frame.
            framing = ResponseFraming.None;
            headers.TransferEncoding = default;
            if (_statusCode != 304)
            {
                headers.ContentLength = null;
            }
        }
        else if (headers.ContentLength is not null)
        {
            // A declared length wins over a Transfer-Encoding the application also set: a message never
            // carries both (RFC 9112 section 6.1).
            framing = ResponseFraming.ContentLength;
            headers.TransferEncoding = default;
        }
        else if (headers.TransferEncoding.Count != 0 && !_http10)
        {
            headers.TransferEncoding = s_chunked;
            framing = ResponseFraming.Chunked;
        }
        else
        {
            // An HTTP/1.0 client does not know chunked (RFC 9112 section 6.1): a Transfer-Encoding the
            // application set is dropped and the body is framed by its length or by closing the connection.
            headers.TransferEncoding = default;
            if (final)
            {
                headers.ContentLength = _bodyBytes;
                framing = ResponseFraming.ContentLength;
            }
            else if (!_http10)
            {
                headers.TransferEncoding = s_chunked;
                framing = ResponseFraming.Chunked;
            }
            else
            {
                framing = ResponseFraming.CloseDelimited;
                KeepAlive = false;
            }
        }

        // A 101 keeps its "Connection: Upgrade": the connection goes on, in the new protocol, even while the server stops.
        if (_statusCode == 101)
        {
            return framing;
        }

        // A response that starts while the server stops says that the connection closes after it.
        if (KeepAlive && (HttpConnectionTokens.ContainsClose(headers.Connection) || Shutdown.IsCancellationRequested))
        {
            KeepAlive = false;
        }

        if (!KeepAlive)
        {
            headers.Connection = s_close;
        }
        else if (_http10)
        {
            headers.Connection = s_keepAlive;
        }

        return framing;
    }

    /// <summary>Moves the staged body bytes into the output, as one chunk when chunked.</summary>
    private void CommitStaged()
    {
        long length = _staged.Length;
        if (length == 0)
        {
            return;
        }

        if (_isHead || _framing == ResponseFraming.None)
        {
            _staged.Consume(_staged.GetSequence().End);
            return;
        }

        if (_framing == ResponseFraming.Chunked)
        {
            ChunkedResponseEncoder.WriteChunkHeader(_output.Writer, length);
            _output.WriteFrom(_staged);
            _output.Write(ChunkedResponseEncoder.ChunkEnd);
        }
        else
        {
            _output.WriteFrom(_staged);
        }
    }

    /// <summary>Writes body bytes of a started response straight into the output.</summary>
    private void WriteFramed(ReadOnlySpan<byte> data)
    {
        if (_framing == ResponseFraming.None)
        {
            return;
        }

        if (_framing == ResponseFraming.Chunked)
        {
            ChunkedResponseEncoder.WriteChunkHeader(_output.Writer, data.Length);
            _output.Write(data);
            _output.Write(ChunkedResponseEncoder.ChunkEnd);
        }
        else
        {
            _output.Write(data);
        }
    }

    /// <summary>
    /// True when a write of <paramref name="length"/> body bytes goes out as a send of its own: the response has started,
    /// or starts with this write anyway (a declared Content-Length, or the write-behind bound reached). A body that would
    /// otherwise stay buffered whole, so that its Content-Length can be computed, stays on the buffered path; so does a
    /// HEAD response's, which is only counted.
    /// </summary>
    private bool IsSentAlone(int length)
    {
        if (_isHead || _state == ResponseState.Completed)
        {
            return false;
        }

        return _state == ResponseState.Started || Headers.ContentLength is not null
            || _staged.Length + _output.Buffered + length >= _output.Limit;
    }

    /// <summary>
    /// Writes a large body write without copying it into the output: the head (when the response starts here), the body
    /// buffered so far and the chunk header go into the output and are sent first, then the caller's bytes in a send of
    /// their own (for TLS, encrypted into records straight from them); a chunk's closing CRLF then waits in the output for
    /// the next send. The returned task completes once the transport took the caller's bytes, so a slow reader holds this
    /// write and nothing of it is buffered.
    /// </summary>
    private ValueTask WriteSentAloneAsync(ReadOnlyMemory<byte> data, CancellationToken cancellationToken)
    {
        CountBodyBytes(data.Length);
        if (_state == ResponseState.NotStarted)
        {
            Start(final: false);
        }
        else
        {
            CommitStaged();
        }

        if (_framing == ResponseFraming.None)
        {
            return default;
        }

        bool chunked = _framing == ResponseFraming.Chunked;
        if (chunked)
        {
            ChunkedResponseEncoder.WriteChunkHeader(_output.Writer, data.Length);
        }

        return _output.SendAfterBufferedAsync(data, endsChunk: chunked, cancellationToken);
    }

    /// <summary>Returns the empty staged block to the pool while the connection waits for its next request.</summary>
    internal void ReleaseIdleBlock()
    {
        if (_staged.Length == 0)
        {
            _staged.Dispose();
        }
    }

    /// <summary>Returns the staged blocks to the pool (connection teardown).</summary>
    internal void ReleaseBuffers()
    {
        _stagedWriter.Dispose();
        _staged.Dispose();
    }
}
