using System;

namespace Falconet.Http;

/// <summary>
/// Hands the trailer fields of a request body to <see cref="HttpRequest.Trailers"/>, apart from its headers. The collection is
/// made at the first field, so a request without trailers allocates nothing.
/// </summary>
internal readonly struct RequestTrailersHandler(HttpRequest request) : IHttpHeadersHandler
{
    public bool OnHeader(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value) => request.Trailers.TryAppend(name, value);

    public void OnHeadersComplete()
    {
    }
}
