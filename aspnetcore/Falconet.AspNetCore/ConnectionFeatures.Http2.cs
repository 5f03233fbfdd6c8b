using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.AspNetCore.Server.Kestrel.Core.Features;

namespace Falconet.AspNetCore;

/// <summary>
/// The features of an HTTP/2 stream (present on HTTP/2 requests only, as on Kestrel): response trailers (sent in a HEADERS
/// frame after the body; what gRPC's status travels in), the stream's reset with an error code (RST_STREAM), and its id.
/// </summary>
internal sealed partial class ConnectionFeatures<TContext> : IHttpResponseTrailersFeature, IHttpResetFeature, IHttp2StreamIdFeature
{
    private ResponseHeaderDictionary? _defaultResponseTrailers;
    private IHeaderDictionary? _responseTrailers;

    /// <summary>Falconet's <see cref="Falconet.Http.HttpResponse.Trailers"/>, read-only once the response completed.</summary>
    IHeaderDictionary IHttpResponseTrailersFeature.Trailers
    {
        get => _responseTrailers
            ?? (_defaultResponseTrailers ??= new ResponseHeaderDictionary(_context.Response.Trailers, () => _context.Response.HasCompleted));
        set => _responseTrailers = value;
    }

    void IHttpResetFeature.Reset(int errorCode) => _context.Reset(errorCode);

    int IHttp2StreamIdFeature.StreamId => _context.StreamId;
}
