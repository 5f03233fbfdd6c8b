using System;
using System.Buffers;
using Falconet.Buffers;
using Falconet.Http.Http1;
using Falconet.Http.Http2;
using Falconet.Http.Http2.HPack;

namespace Falconet.Http;

/// <summary>
/// What a connection makes and does differently per header set: its request and response objects, and the parse of a
/// request head with the parser specialized for the set.
/// </summary>
/// <remarks>
/// The connection calls these once per connection (the objects) or once per parse of a head (a virtual call each);
/// inside, the parser runs generic over the set's struct, so every header it reads reaches the generated matcher
/// through a direct call.
/// </remarks>
internal abstract class HeaderSetBinding
{
    /// <summary>The default schema: plain <see cref="HttpContext"/>, <see cref="RequestHeaders"/> and <see cref="ResponseHeaders"/>.</summary>
    public static HeaderSetBinding BuiltIn { get; } = new BuiltInHeaderSetBinding();

    public abstract RequestHeaders CreateRequestHeaders();

    public abstract HttpRequest CreateRequest(RequestHeaders headers, RequestBodyReader body);

    public abstract HttpResponse CreateResponse(Http1OutputBuffer output, SlabMemoryPool pool);

    /// <summary>The response of an HTTP/2 stream.</summary>
    public abstract HttpResponse CreateResponse(Http2Stream stream, SlabMemoryPool pool);

    public abstract HttpContext CreateContext(IHttpContextOwner owner, HttpRequest request, HttpResponse response);

    /// <summary>
    /// Decodes an HTTP/2 header block with the decoder compiled for the set (a virtual call per block; inside, the set's
    /// matcher is a direct call): the request's pseudo-headers into <paramref name="head"/>, its fields into its headers.
    /// <paramref name="request"/> null: trailers, checked and dropped.
    /// </summary>
    public abstract HPackDecodeResult DecodeHttp2Request(HPackDecoder decoder, ReadOnlySpan<byte> block, Http2RequestHead head, HttpRequest? request, int maxFields);

    /// <summary>
    /// The parser's request line into <paramref name="request"/>; <paramref name="emptyLinesBefore"/> counts the
    /// empty lines the connection already consumed before this line (they count toward the line limit).
    /// </summary>
    public abstract bool TryParseRequestLine(HttpRequest request, ref SequenceReader<byte> reader, HttpLimits limits, int emptyLinesBefore);

    /// <summary><see cref="Http1Parser.TryParseHeaders"/> into the headers of <paramref name="request"/>.</summary>
    public abstract bool TryParseHeaders(HttpRequest request, ref SequenceReader<byte> reader, HttpLimits limits, ref HeaderParseState state);
}

/// <summary>The parse of a request head, compiled by the JIT for one header set.</summary>
internal abstract class HeaderSetBinding<THeaderSet> : HeaderSetBinding
    where THeaderSet : struct, IHeaderSet
{
    public sealed override bool TryParseRequestLine(HttpRequest request, ref SequenceReader<byte> reader, HttpLimits limits, int emptyLinesBefore)
    {
        var handler = new Http1ParsingHandler<THeaderSet>(request, request.Headers);
        return Http1Parser.TryParseRequestLine(ref handler, ref reader, limits, emptyLinesBefore);
    }

    public sealed override bool TryParseHeaders(HttpRequest request, ref SequenceReader<byte> reader, HttpLimits limits, ref HeaderParseState state)
    {
        var handler = new Http1ParsingHandler<THeaderSet>(request, request.Headers);
        return Http1Parser.TryParseHeaders(ref handler, ref reader, limits, ref state);
    }

    public sealed override HPackDecodeResult DecodeHttp2Request(HPackDecoder decoder, ReadOnlySpan<byte> block, Http2RequestHead head, HttpRequest? request, int maxFields)
    {
        var handler = new Http2RequestHeadersHandler<THeaderSet>(head, request, maxFields);
        return decoder.Decode(block, ref handler);
    }
}

/// <summary>The default schema's objects: what today's non-generic API hands the application.</summary>
internal sealed class BuiltInHeaderSetBinding : HeaderSetBinding<BuiltInHeaderSet>
{
    public override RequestHeaders CreateRequestHeaders() => new();

    public override HttpRequest CreateRequest(RequestHeaders headers, RequestBodyReader body) => new(headers, body);

    public override HttpResponse CreateResponse(Http1OutputBuffer output, SlabMemoryPool pool) => new(new ResponseHeaders(), output, pool);

    public override HttpResponse CreateResponse(Http2Stream stream, SlabMemoryPool pool) => new(new ResponseHeaders(), stream, pool);

    public override HttpContext CreateContext(IHttpContextOwner owner, HttpRequest request, HttpResponse response) => new(owner, request, response);
}

/// <summary>An app's own header set: the typed <see cref="HttpContext{THeaderSet}"/> and its collections.</summary>
internal sealed class AppHeaderSetBinding<THeaderSet> : HeaderSetBinding<THeaderSet>
    where THeaderSet : struct, IHeaderSet
{
    public static AppHeaderSetBinding<THeaderSet> Instance { get; } = new();

    public override RequestHeaders CreateRequestHeaders() => new RequestHeaders<THeaderSet>();

    public override HttpRequest CreateRequest(RequestHeaders headers, RequestBodyReader body)
        => new HttpRequest<THeaderSet>((RequestHeaders<THeaderSet>)headers, body);

    public override HttpResponse CreateResponse(Http1OutputBuffer output, SlabMemoryPool pool)
        => new HttpResponse<THeaderSet>(new ResponseHeaders<THeaderSet>(), output, pool);

    public override HttpResponse CreateResponse(Http2Stream stream, SlabMemoryPool pool)
        => new HttpResponse<THeaderSet>(new ResponseHeaders<THeaderSet>(), stream, pool);

    public override HttpContext CreateContext(IHttpContextOwner owner, HttpRequest request, HttpResponse response)
        => new HttpContext<THeaderSet>(owner, (HttpRequest<THeaderSet>)request, (HttpResponse<THeaderSet>)response);
}
