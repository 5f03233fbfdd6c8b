using System;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Buffers;
using Falconet.Http.Http1;
using Falconet.Http.Http2;
using Microsoft.Extensions.Primitives;

namespace Falconet.Http;

/// <summary>
/// The response on HTTP/2: the same staging of the body as on HTTP/1.1, then a HEADERS frame instead of a status line and
/// DATA frames within the flow-control windows instead of chunks. Every public member of <see cref="HttpResponse"/> that
/// reaches the output branches here first when the response belongs to a stream (<see cref="_stream"/> set), so HTTP/1.1
/// pays one null check.
/// </summary>
public partial class HttpResponse
{
    private static readonly StringValues s_http2Server = new("Falconet");

    // The bits of Connection, Transfer-Encoding, Keep-Alive and Upgrade in every response collection (the default schema's).
    private static readonly ulong s_connectionSpecific = (1UL << ResponseHeaders.Table.IndexOf("Connection")) | (1UL << ResponseHeaders.Table.IndexOf("Transfer-Encoding"))
        | (1UL << ResponseHeaders.Table.IndexOf("Keep-Alive")) | (1UL << ResponseHeaders.Table.IndexOf("Upgrade"));

    private readonly Http2Stream? _stream;
    private ResponseHeaders? _trailers;
    private bool _http2Ending;

    internal HttpResponse(ResponseHeaders headers, Http2Stream stream, SlabMemoryPool pool)
    {
        Headers = headers;
        _stream = stream;

        // Never touched on HTTP/2: every path that would reach it branches on _stream first.
        _output = null!;
        _staged = new BlockChain(pool);
        _stagedWriter = new BlockChainWriter(_staged);
        BodyWriter = new ResponseBodyWriter(this);
        Body = new ResponseBodyStream(this);
    }

    /// <summary>
    /// Trailer fields sent after the body (made on first use). HTTP/2 sends them as a last HEADERS frame; on HTTP/1.1 they are
    /// not sent (see <see cref="SupportsTrailers"/>).
    /// </summary>
    public ResponseHeaders Trailers => _trailers ??= new ResponseHeaders();

    /// <summary>True when the protocol of the request carries response trailers (HTTP/2).</summary>
    public bool SupportsTrailers => _stream is not null;

    /// <summary>True once END_STREAM went out (HTTP/2): the client has the whole response.</summary>
    internal bool Http2EndStreamSent => _stream is not null && _stream.State is Http2StreamState.HalfClosedLocal or Http2StreamState.Closed;

    private bool HasTrailers => _trailers is { Count: > 0 };

    private void Http2Write(ReadOnlySpan<byte> data)
    {
        _stagedWriter.Write(data);
        Http2AfterStaging();
    }

    /// <summary>After body bytes were staged: start the response at the bound, or pass what the windows allow on.</summary>
    private void Http2AfterStaging()
    {
        Http2Stream stream = _stream!;
        if (_state == ResponseState.NotStarted)
        {
            if (_staged.Length >= stream.OutputLimit)
            {
                Http2Start(final: false);
                stream.TrySendData(_staged, endStream: false);
            }

            return;
        }

        stream.TrySendData(_staged, endStream: false);
    }

    private ValueTask Http2WriteAsync(ReadOnlyMemory<byte> data, CancellationToken cancellationToken)
    {
        Write(data.Span);
        return Http2WaitForRoomAsync(cancellationToken);
    }

    /// <summary>Waits while the staged body is at or above the bound (for window, or for output room).</summary>
    private ValueTask Http2WaitForRoomAsync(CancellationToken cancellationToken)
        => _state != ResponseState.NotStarted && _staged.Length >= _stream!.OutputLimit ? Http2DrainAsync(drainAll: false, cancellationToken) : default;

    private async ValueTask Http2DrainAsync(bool drainAll, CancellationToken cancellationToken)
    {
        Http2Stream stream = _stream!;
        while (!stream.TrySendData(_staged, endStream: false) && (drainAll || _staged.Length >= stream.OutputLimit))
        {
            cancellationToken.ThrowIfCancellationRequested();
            await stream.WaitToSendAsync().ConfigureAwait(false);
        }

        stream.Flush();
    }

    private ValueTask Http2FlushAsync(CancellationToken cancellationToken)
    {
        if (_state == ResponseState.Completed)
        {
            throw new InvalidOperationException("The response has completed.");
        }

        if (_state == ResponseState.NotStarted)
        {
            Http2Start(final: false);
        }

        if (_stream!.TrySendData(_staged, endStream: false))
        {
            _stream.Flush();
            return default;
        }

        return Http2DrainAsync(drainAll: true, cancellationToken);
    }

    private async ValueTask Http2CompleteAsync(CancellationToken cancellationToken)
    {
        if (_state != ResponseState.Completed)
        {
            Http2Complete();
        }

        Http2Stream stream = _stream!;
        while (!Http2TrySendRest())
        {
            cancellationToken.ThrowIfCancellationRequested();
            await stream.WaitToSendAsync().ConfigureAwait(false);
        }

        stream.Flush();
    }

    /// <summary>Completes the response: the head when it has not started (Content-Length from the staged body), then the end.</summary>
    /// <exception cref="InvalidOperationException">The body does not match a declared Content-Length.</exception>
    private void Http2Complete()
    {
        if (_state == ResponseState.NotStarted)
        {
            long? declared = Headers.ContentLength;
            if (declared is not null && declared != _bodyBytes && !_isHead && !HttpStatusLines.IsBodyless(_statusCode))
            {
                throw new InvalidOperationException(
                    $"The handler wrote {_bodyBytes} body bytes but declared Content-Length {declared}.");
            }

            Http2Start(final: true);
        }
        else if (_state == ResponseState.Started && _declaredLength is long length && length != _bodyBytes && !_isHead)
        {
            throw new InvalidOperationException(
                $"The handler wrote {_bodyBytes} body bytes but declared Content-Length {_declaredLength}.");
        }

        _http2Ending = true;
        _state = ResponseState.Completed;
    }

    /// <summary>
    /// Sends what a completed response still holds: the staged body, then the trailers or END_STREAM. True once all of it is
    /// out (or the stream is gone); false when the rest waits for window or output room.
    /// </summary>
    internal bool Http2TrySendRest()
    {
        Http2Stream stream = _stream!;
        if (!_http2Ending || Http2EndStreamSent)
        {
            return true;
        }

        bool trailers = HasTrailers;
        if (!stream.TrySendData(_staged, endStream: !trailers))
        {
            return false;
        }

        if (trailers && !Http2EndStreamSent)
        {
            stream.WriteTrailers(_trailers!);
        }

        return true;
    }

    /// <summary>An empty response of <paramref name="statusCode"/> (Content-Length: 0) in place of one that has not started.</summary>
    private bool Http2WriteEmptyResponse(int statusCode)
    {
        if (_state != ResponseState.NotStarted)
        {
            return false;
        }

        Reset(_isHead, http10: false, keepAlive: true);
        _statusCode = statusCode;
        Headers.ContentLength = 0;
        Http2Start(final: true);
        _http2Ending = true;
        _state = ResponseState.Completed;
        return true;
    }

    /// <summary>
    /// Writes the head as a HEADERS frame: Server and Date when absent, Content-Length from a complete buffered body, no
    /// connection-specific field (RFC 9113 section 8.2.2). All or nothing, as on HTTP/1.1: when the head cannot be written,
    /// Content-Length is restored and the response has not started.
    /// </summary>
    private void Http2Start(bool final)
    {
        ResponseHeaders headers = Headers;
        long? contentLength = headers.ContentLength;
        if (headers.Server.Count == 0)
        {
            headers.Server = s_http2Server;
        }

        if (headers.Date.Count == 0)
        {
            headers.Date = DateHeaderValues.Value;
        }

        bool bodyless = HttpStatusLines.IsBodyless(_statusCode);
        if (bodyless)
        {
            // RFC 9110 section 8.6: no Content-Length in a 204; a 304 keeps one the application set (section 15.4.5).
            if (_statusCode != 304)
            {
                headers.ContentLength = null;
            }
        }
        else if (contentLength is null && final)
        {
            headers.ContentLength = _bodyBytes;
        }

        // Connection-specific fields mean nothing on HTTP/2 and make a client treat the response as malformed.
        if ((headers.PresentBits & s_connectionSpecific) != 0)
        {
            headers.Connection = default;
            headers.TransferEncoding = default;
            headers.KeepAlive = default;
            headers.Upgrade = default;
        }

        if (headers.UnknownHeaders is { Count: > 0 })
        {
            headers.Remove("Proxy-Connection");
        }

        bool endStream = final && (bodyless || _isHead || _bodyBytes == 0) && !HasTrailers;
        try
        {
            _stream!.WriteResponseHead(_statusCode, headers, endStream);
        }
        catch
        {
            headers.ContentLength = contentLength;
            throw;
        }

        _declaredLength = bodyless ? null : headers.ContentLength;
        _state = ResponseState.Started;
        if (_isHead || bodyless)
        {
            _staged.Consume(_staged.GetSequence().End);
        }
    }
}
