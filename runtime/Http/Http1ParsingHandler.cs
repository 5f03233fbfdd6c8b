using System;

namespace Falconet.Http;

/// <summary>
/// The struct handler the parser is specialized for: the request line goes into the connection's request
/// object, each header into the generated <see cref="RequestHeaders"/> (an invalid typed value rejects the request),
/// and the complete section must pass <see cref="RequestHeaderChecks"/> (Host, Expect).
/// </summary>
internal readonly struct Http1ParsingHandler : IHttpRequestLineHandler, IHttpHeadersHandler
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

    public bool OnHeader(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value) => _headers.TryAppend(name, value);

    // Thrown here, a rejection reaches the connection like a parse error: answered with its status, then the connection closes.
    public void OnHeadersComplete() => RequestHeaderChecks.Check(_headers, _request.Version, _request.TargetForm, ref _request.ValidatedHost);
}
