using Falconet.Buffers;
using Falconet.Http.Http1;

namespace Falconet.Http;

/// <summary>
/// <see cref="HttpContext"/> of a server running an app's own header set: the same request and response, with headers
/// typed as that set's collections, so its typed properties (from the app's <c>*.headers.json</c>) are at hand.
/// </summary>
/// <typeparam name="THeaderSet">The header set Falconet.Generator emitted from the app's <c>*.headers.json</c>.</typeparam>
public sealed class HttpContext<THeaderSet> : HttpContext
    where THeaderSet : struct, IHeaderSet
{
    internal HttpContext(IHttpContextOwner connection, HttpRequest<THeaderSet> request, HttpResponse<THeaderSet> response)
        : base(connection, request, response)
    {
        Request = request;
        Response = response;
    }

    /// <summary>The current request, its headers typed as the set's.</summary>
    public new HttpRequest<THeaderSet> Request { get; }

    /// <summary>The response to the current request, its headers typed as the set's.</summary>
    public new HttpResponse<THeaderSet> Response { get; }
}

/// <summary><see cref="HttpRequest"/> whose headers are typed as an app's own header set.</summary>
/// <typeparam name="THeaderSet">The header set Falconet.Generator emitted from the app's <c>*.headers.json</c>.</typeparam>
public sealed class HttpRequest<THeaderSet> : HttpRequest
    where THeaderSet : struct, IHeaderSet
{
    internal HttpRequest(RequestHeaders<THeaderSet> headers, RequestBodyReader bodyReader)
        : base(headers, bodyReader)
    {
        Headers = headers;
    }

    /// <summary>The request headers: the same collection as <see cref="HttpRequest.Headers"/>, typed as the set's.</summary>
    public new RequestHeaders<THeaderSet> Headers { get; }
}

/// <summary><see cref="HttpResponse"/> whose headers are typed as an app's own header set.</summary>
/// <typeparam name="THeaderSet">The header set Falconet.Generator emitted from the app's <c>*.headers.json</c>.</typeparam>
public sealed class HttpResponse<THeaderSet> : HttpResponse
    where THeaderSet : struct, IHeaderSet
{
    internal HttpResponse(ResponseHeaders<THeaderSet> headers, Http1OutputBuffer output, SlabMemoryPool pool)
        : base(headers, output, pool)
    {
        Headers = headers;
    }

    internal HttpResponse(ResponseHeaders<THeaderSet> headers, Http2.Http2Stream stream, SlabMemoryPool pool)
        : base(headers, stream, pool)
    {
        Headers = headers;
    }

    /// <summary>The response headers: the same collection as <see cref="HttpResponse.Headers"/>, typed as the set's.</summary>
    public new ResponseHeaders<THeaderSet> Headers { get; }
}
