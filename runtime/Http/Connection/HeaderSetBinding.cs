using Falconet.Buffers;
using Falconet.Http.Http1;
using Falconet.Http.Http2;

namespace Falconet.Http;

/// <summary>
/// What a connection makes and does differently per header set: its request and response objects, and the parse of a
/// request head with the parser specialized for the set (one partial file per protocol: <c>HeaderSetBinding.Http1.cs</c>,
/// <c>HeaderSetBinding.Http2.cs</c>).
/// </summary>
/// <remarks>
/// The connection calls these once per connection (the objects) or once per parse of a head (a virtual call each);
/// inside, the parser runs generic over the set's struct, so every header it reads reaches the generated matcher
/// through a direct call.
/// </remarks>
internal abstract partial class HeaderSetBinding
{
    /// <summary>The default schema: plain <see cref="HttpContext"/>, <see cref="RequestHeaders"/> and <see cref="ResponseHeaders"/>.</summary>
    public static HeaderSetBinding BuiltIn { get; } = new BuiltInHeaderSetBinding();

    public abstract RequestHeaders CreateRequestHeaders();

    public abstract HttpRequest CreateRequest(RequestHeaders headers, RequestBodyReader body);

    public abstract HttpResponse CreateResponse(Http1OutputBuffer output, SlabMemoryPool pool);

    /// <summary>The response of an HTTP/2 stream.</summary>
    public abstract HttpResponse CreateResponse(Http2Stream stream, SlabMemoryPool pool);

    public abstract HttpContext CreateContext(IHttpContextOwner owner, HttpRequest request, HttpResponse response);
}

/// <summary>The binding of one header set: the parse of a request head, compiled by the JIT for that set.</summary>
internal abstract partial class HeaderSetBinding<THeaderSet> : HeaderSetBinding
    where THeaderSet : struct, IHeaderSet
{
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
