using System;

namespace Falconet.Http.Http1;

/// <summary>
/// The struct handler the parser is specialized for: the request line goes into the connection's request
/// object, each header into its <see cref="RequestHeaders"/> through the matcher of <typeparamref name="THeaderSet"/>
/// (an invalid typed value rejects the request), and the complete section must pass <see cref="RequestHeaderChecks"/> (Host, Expect).
/// </summary>
/// <typeparam name="THeaderSet">A struct, so the JIT compiles the parser for the set and calls its matcher directly.</typeparam>
internal readonly struct Http1ParsingHandler<THeaderSet> : IHttpRequestLineHandler, IHttpHeadersHandler, IRepeatedRequestLineHandler,
    IRepeatedHeaderSectionHandler
    where THeaderSet : struct, IHeaderSet
{
    private readonly HttpRequest _request;
    private readonly RequestHeaders _headers;

    public Http1ParsingHandler(HttpRequest request, RequestHeaders headers)
    {
        _request = request;
        _headers = headers;
    }

    public void OnRequestLine(KnownMethod method, ReadOnlySpan<byte> methodToken, ReadOnlySpan<byte> target,
        RequestTargetForm form, int queryIndex, KnownVersion version)
    {
        _headers.Clear();
        _request.SetRequestLine(method, methodToken, target, form, queryIndex, version);
    }

    public int TryRepeatRequestLine(ReadOnlySpan<byte> received)
    {
        int length = _request.TryRepeatRequestLine(received);
        if (length != 0)
        {
            _headers.Clear();
        }

        return length;
    }

    public void RememberRequestLine(ReadOnlySpan<byte> line) => _request.RememberRequestLine(line);

    public int TryRepeatRequestHead(ReadOnlySpan<byte> received) => _request.TryRepeatRequestHead(received);

    public void RememberRequestHead(ReadOnlySpan<byte> head) => _request.RememberRequestHead(head);

    public bool OnHeader(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
        => _headers.TryAppendMatched(THeaderSet.IndexOfRequestHeader(name), name, value);

    public int TryRepeatHeaderSection(ReadOnlySpan<byte> received) => _headers.TryRepeatSection(received);

    public void RememberHeaderSection(ReadOnlySpan<byte> section) => _headers.RememberSection(section);

    // Thrown here, a rejection reaches the connection like a parse error: answered with its status, then the connection closes.
    public void OnHeadersComplete() => RequestHeaderChecks.Check(_headers, _request.Version, _request.TargetForm, ref _request.ValidatedHost);
}
