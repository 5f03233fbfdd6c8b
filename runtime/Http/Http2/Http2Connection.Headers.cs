using System;
using System.Buffers;
using System.Buffers.Binary;
using System.Threading;
using Falconet.Http.Http2.HPack;
using Microsoft.Extensions.Primitives;

namespace Falconet.Http.Http2;

// Header blocks: HEADERS and its CONTINUATION frames assembled (within bounds: the CONTINUATION flood), decoded in
// arrival order by the connection's HPACK decoder, and turned into a new stream's request, a request's trailers, or
// nothing (a refused or closed stream, whose block still updates the decoder).
internal sealed partial class Http2Connection
{
    private readonly HPackDecoder _decoder;
    private readonly Http2RequestHead _head;
    private byte[] _headerBlock = [];
    private int _headerBlockLength;
    private int _headerBlockStreamId;
    private bool _headerBlockEndStream;
    private bool _headerBlockSelfDependent;
    private int _continuationFrames;
    private bool _headerBlockDeadlineArmed;

    // The request whose head CheckHeaders checks: a Host it validated before is not scanned again.
    private HttpRequest? _validatingRequest;

    private HPackDecoder CreateDecoder()
        => new(_limits.HeaderTableSize, _settings.Limits.MaxRequestHeadersSize, _settings.Limits.MaxRequestHeadersSize);

    private void ProcessHeaders(Http2FrameHeader header, ReadOnlySequence<byte> payload)
    {
        int streamId = header.StreamId;
        if (streamId == 0)
        {
            Http2ConnectionException.Throw(Http2ErrorReason.InvalidStreamId, "HEADERS on stream 0.");
        }

        if ((streamId & 1) == 0)
        {
            // Section 5.1.1: a client opens odd-numbered streams only.
            Http2ConnectionException.Throw(Http2ErrorReason.EvenStreamId, "HEADERS on an even-numbered stream.");
        }

        ReadOnlySequence<byte> fragment = RemovePadding(header, payload);
        bool selfDependent = false;
        if (header.HasFlag(Http2FrameFlags.Priority))
        {
            if (fragment.Length < 5)
            {
                Http2ConnectionException.Throw(Http2ErrorReason.InvalidFrameLength, "HEADERS too short for its priority fields.");
            }

            Span<byte> priority = stackalloc byte[4];
            fragment.Slice(0, 4).CopyTo(priority);
            selfDependent = (int)(BinaryPrimitives.ReadUInt32BigEndian(priority) & 0x7FFF_FFFF) == streamId;
            fragment = fragment.Slice(5);
        }

        bool endHeaders = header.HasFlag(Http2FrameFlags.EndHeaders);
        bool endStream = header.HasFlag(Http2FrameFlags.EndStream);
        if (fragment.IsEmpty && !endHeaders)
        {
            CountEmptyFrame();
        }

        if (endHeaders && fragment.IsSingleSegment)
        {
            // The common case: the whole block in one frame and one block, decoded where it lies.
            ProcessHeaderBlock(streamId, fragment.FirstSpan, endStream, selfDependent);
            return;
        }

        _headerBlockLength = 0;
        AppendToHeaderBlock(fragment);
        if (endHeaders)
        {
            ProcessHeaderBlock(streamId, _headerBlock.AsSpan(0, _headerBlockLength), endStream, selfDependent);
            return;
        }

        _headerBlockStreamId = streamId;
        _headerBlockEndStream = endStream;
        _headerBlockSelfDependent = selfDependent;
        _continuationFrames = 0;
    }

    private void ProcessContinuation(Http2FrameHeader header, ReadOnlySequence<byte> payload)
    {
        if (_headerBlockStreamId == 0)
        {
            // Section 6.10: CONTINUATION only follows a HEADERS (or CONTINUATION) without END_HEADERS.
            Http2ConnectionException.Throw(Http2ErrorReason.UnexpectedContinuation, "CONTINUATION without a header block in progress.");
        }

        if (header.StreamId != _headerBlockStreamId)
        {
            Http2ConnectionException.Throw(Http2ErrorReason.HeaderBlockInterrupted, "CONTINUATION on another stream than its header block.");
        }

        if (++_continuationFrames > _limits.MaxContinuationFrames)
        {
            // The CONTINUATION flood (CVE-2024-27316 and kin): a block cannot grow frame after frame without bound.
            Http2ConnectionException.Throw(Http2ErrorReason.TooManyContinuationFrames, "Too many CONTINUATION frames in one header block.");
        }

        bool endHeaders = header.HasFlag(Http2FrameFlags.EndHeaders);
        if (payload.IsEmpty && !endHeaders)
        {
            CountEmptyFrame();
        }

        AppendToHeaderBlock(payload);
        if (!endHeaders)
        {
            return;
        }

        int streamId = _headerBlockStreamId;
        _headerBlockStreamId = 0;
        ProcessHeaderBlock(streamId, _headerBlock.AsSpan(0, _headerBlockLength), _headerBlockEndStream, _headerBlockSelfDependent);
    }

    private void AppendToHeaderBlock(ReadOnlySequence<byte> fragment)
    {
        long length = _headerBlockLength + fragment.Length;
        if (length > _limits.MaxHeaderBlockSize)
        {
            Http2ConnectionException.Throw(Http2ErrorReason.HeaderBlockTooLarge, "A header block larger than the server assembles.");
        }

        if (length > _headerBlock.Length)
        {
            byte[] larger = new byte[(int)Math.Min(_limits.MaxHeaderBlockSize, Math.Max(length, Math.Max(4096, _headerBlock.Length * 2L)))];
            _headerBlock.AsSpan(0, _headerBlockLength).CopyTo(larger);
            _headerBlock = larger;
        }

        fragment.CopyTo(_headerBlock.AsSpan(_headerBlockLength));
        _headerBlockLength = (int)length;
    }

    /// <summary>A complete header block: a new stream's request, trailers of an open one, or a block only decoded.</summary>
    private void ProcessHeaderBlock(int streamId, ReadOnlySpan<byte> block, bool endStream, bool selfDependent)
    {
        Http2Stream? stream;
        bool newStream = false;
        lock (Output.Gate)
        {
            if (!_streams.TryGetValue(streamId, out stream) && streamId > _lastStreamId)
            {
                _lastStreamId = streamId;
                newStream = true;
                if (!_goAwaySent && !_peerGoingAway)
                {
                    stream = TryOpenStreamLocked(streamId, endStream);
                    if (stream is null)
                    {
                        _closedStreams.Add(streamId, Http2StreamClosure.ResetByServer);
                    }
                }
            }
        }

        if (newStream)
        {
            if (stream is null)
            {
                // Refused or ignored: decoded all the same, the table is shared by every stream.
                DecodeDiscarding(block);
                if (!_goAwaySent && !_peerGoingAway)
                {
                    ResetStream(streamId, Http2ErrorReason.MaxConcurrentStreams);
                }

                return;
            }

            OpenRequest(stream, block, endStream, selfDependent);
            return;
        }

        if (stream is not null)
        {
            ProcessTrailers(stream, block, endStream);
            return;
        }

        DecodeDiscarding(block);
        Http2StreamClosure? closure;
        lock (Output.Gate)
        {
            closure = _closedStreams.Find(streamId);
        }

        switch (closure)
        {
            case Http2StreamClosure.ResetByServer:
                break;
            case Http2StreamClosure.ResetByPeer:
                ResetStream(streamId, Http2ErrorReason.FrameOnClosedStream);
                break;
            case Http2StreamClosure.Ended:
                Http2ConnectionException.Throw(Http2ErrorReason.FrameOnClosedStream, "HEADERS on a closed stream.");
                break;
            default:
                // Section 5.1.1: a stream identifier below one already used, for a stream never opened.
                Http2ConnectionException.Throw(Http2ErrorReason.StreamIdNotIncreasing, "HEADERS on a stream identifier lower than one already used.");
                break;
        }
    }

    private void DecodeDiscarding(ReadOnlySpan<byte> block)
    {
        _head.Reset();
        var handler = new Http2RequestHeadersHandler<BuiltInHeaderSet>(_head, request: null, int.MaxValue, trailers: false);
        CheckDecoded(_decoder.Decode(block, ref handler));
    }

    private static void CheckDecoded(HPackDecodeResult result)
    {
        if (result.IsCompressionError())
        {
            // Section 4.3: the decoder's state is lost; the connection cannot go on.
            Http2ConnectionException.Throw(Http2ErrorReason.CompressionError, $"The header block could not be decoded ({result}).");
        }
    }

    /// <summary>Decodes a new stream's request head, checks it (section 8.3), and starts its handler or answers it.</summary>
    private void OpenRequest(Http2Stream stream, ReadOnlySpan<byte> block, bool endStream, bool selfDependent)
    {
        HttpRequest request = stream.Request;
        RequestHeaders headers = stream.RequestHeaders;
        headers.Clear();
        _head.Reset();
        HPackDecodeResult result = _settings.HeaderSet.DecodeHttp2Request(_decoder, block, _head, request, _settings.Limits.MaxRequestHeaderCount, trailers: false);
        if (result.IsCompressionError())
        {
            // The connection ends: the stream, opened for nothing, goes back before the GOAWAY.
            lock (Output.Gate)
            {
                stream.DiscardUnstartedLocked();
            }

            CheckDecoded(result);
        }

        if (selfDependent)
        {
            RejectStream(stream, Http2ErrorReason.SelfDependency);
            return;
        }

        string? malformed = result == HPackDecodeResult.MalformedField ? "a malformed field" : _head.Malformed;
        RequestRejectionReason? rejection = result == HPackDecodeResult.HeaderListTooLarge
            ? RequestRejectionReason.HeadersTooLarge
            : _head.Rejection;
        RequestTargetForm form = RequestTargetForm.Origin;
        int queryIndex = -1;
        KnownMethod method = _head.Method;
        if (malformed is null && rejection is null)
        {
            malformed = CheckPseudoHeaders(method, out form, out queryIndex);
        }

        long contentLength = -1;
        bool expectContinue = false;
        bool targetSet = false;
        if (malformed is null && rejection is null)
        {
            targetSet = true;
            ReadOnlySpan<byte> target = form == RequestTargetForm.Authority ? ReadOnlySpan<byte>.Empty : _head.Path;
            request.SetRequestLine(method, _head.MethodToken, target, form, queryIndex, KnownVersion.None);
            _validatingRequest = request;
            malformed = CheckHeaders(headers, endStream, ref rejection, out contentLength, out expectContinue);
        }

        if (malformed is not null)
        {
            HttpLog.Http2MalformedRequest(_settings.Logger, Id, stream.Id, malformed);
            RejectStream(stream, Http2ErrorReason.MalformedRequest);
            return;
        }

        if (rejection is null && method == KnownMethod.Connect && !_settings.AllowConnect)
        {
            rejection = RequestRejectionReason.ConnectNotSupported;
        }

        if (rejection is not null && !targetSet)
        {
            // The head stopped short of a target; the answer needs only the method (HEAD gets no body).
            request.SetRequestLine(method, _head.MethodToken, "/"u8, RequestTargetForm.Origin, -1, KnownVersion.None);
        }

        RequestBodyKind bodyKind = endStream ? RequestBodyKind.None
            : contentLength >= 0 ? RequestBodyKind.ContentLength : RequestBodyKind.Frames;
        request.BodyKind = bodyKind;
        stream.Body.ResetForStream(endStream);
        stream.SetBody(contentLength, expectContinue);
        stream.Response.Reset(isHead: method == KnownMethod.Head, http10: false, keepAlive: true);
        stream.Response.AllowSynchronousWrites = _settings.AllowSynchronousWrites;

        if (rejection is { } reason)
        {
            stream.Reject(new BadHttpRequestException(reason));
            return;
        }

        StartAfterBatch(stream, endStream);
    }

    /// <summary>A stream refused before its handler runs: reset, logged, counted, taken from the reset budget.</summary>
    private void RejectStream(Http2Stream stream, Http2ErrorReason reason)
    {
        int streamId = stream.Id;
        lock (Output.Gate)
        {
            stream.AbandonUnstartedLocked(Http2Errors.GetCode(reason));
        }

        OnStreamErrorSent(streamId, reason);
    }

    /// <summary>Section 8.3.1: what every request needs (and CONNECT must not have); the target's form. Null when well formed.</summary>
    private string? CheckPseudoHeaders(KnownMethod method, out RequestTargetForm form, out int queryIndex)
    {
        form = RequestTargetForm.Origin;
        queryIndex = -1;
        if (!_head.HasMethod)
        {
            return "no :method";
        }

        if (method == KnownMethod.Connect)
        {
            // Section 8.5: CONNECT carries only :authority, the host and port of the tunnel.
            if (_head.HasScheme || _head.HasPath || !_head.HasAuthority)
            {
                return "a CONNECT request without :authority alone";
            }

            form = RequestTargetForm.Authority;
            return null;
        }

        if (!_head.HasScheme)
        {
            return "no :scheme";
        }

        if (!_head.HasPath)
        {
            return "no :path";
        }

        ReadOnlySpan<byte> path = _head.Path;
        if (path.SequenceEqual("*"u8))
        {
            if (method != KnownMethod.Options)
            {
                return "a :path of \"*\" for another method than OPTIONS";
            }

            form = RequestTargetForm.Asterisk;
            return null;
        }

        if (path[0] != (byte)'/' || path.Contains((byte)'#'))
        {
            return "a :path that is not an origin-form target";
        }

        queryIndex = path.IndexOf((byte)'?');
        return null;
    }

    /// <summary>The regular fields as a whole: Host, Expect, Content-Length against the body. Null when well formed.</summary>
    private string? CheckHeaders(RequestHeaders headers, bool endStream, ref RequestRejectionReason? rejection, out long contentLength, out bool expectContinue)
    {
        contentLength = headers.ContentLength ?? -1;
        expectContinue = false;
        StringValues host = headers.Host;
        if (host.Count > 1)
        {
            return "more than one Host";
        }

        if (host.Count == 1 && !ReferenceEquals(host[0], _validatingRequest!.ValidatedHost))
        {
            if (!UriAuthority.IsValidHostHeader(host[0]))
            {
                return "an invalid Host";
            }

            _validatingRequest.ValidatedHost = host[0];
        }

        if (endStream && contentLength > 0)
        {
            // Section 8.1.1: the body (none, END_STREAM came with the head) must match Content-Length.
            return "a Content-Length with no body";
        }

        if (contentLength > _settings.Limits.MaxRequestBodySize)
        {
            rejection ??= RequestRejectionReason.BodyTooLarge;
        }

        StringValues expect = headers.Expect;
        if (expect.Count != 0)
        {
            if (!RequestHeaderChecks.ExpectsOnlyContinue(expect))
            {
                rejection ??= RequestRejectionReason.UnsupportedExpectation;
            }
            else
            {
                expectContinue = !endStream;
            }
        }

        return null;
    }

    /// <summary>
    /// A second header block on an open stream: the request's trailers, which must end it (section 8.1), kept in
    /// <see cref="HttpRequest.Trailers"/> before the end of the body is visible to the handler.
    /// </summary>
    private void ProcessTrailers(Http2Stream stream, ReadOnlySpan<byte> block, bool endStream)
    {
        _head.Reset();
        bool keep = endStream && stream.State is Http2StreamState.Open or Http2StreamState.HalfClosedLocal;
        HPackDecodeResult result = _settings.HeaderSet.DecodeHttp2Request(_decoder, block, _head, keep ? stream.Request : null,
            _settings.Limits.MaxRequestHeaderCount, trailers: true);
        CheckDecoded(result);
        Http2ErrorReason? error = null;
        int streamId;
        lock (Output.Gate)
        {
            if (stream.State is Http2StreamState.HalfClosedRemote or Http2StreamState.Closed)
            {
                error = Http2ErrorReason.FrameAfterEndStream;
            }
            else if (!endStream)
            {
                error = Http2ErrorReason.HeadersWithoutEndStream;
            }
            else if (result != HPackDecodeResult.Success || _head.Malformed is not null || !stream.BodyLengthMatches)
            {
                error = Http2ErrorReason.MalformedRequest;
            }
            else
            {
                stream.EndOfRequestLocked();
                return;
            }

            streamId = stream.Id;
            ResetStreamLocked(stream, error.Value);
        }

        OnStreamErrorSent(streamId, error.Value);
    }
}
