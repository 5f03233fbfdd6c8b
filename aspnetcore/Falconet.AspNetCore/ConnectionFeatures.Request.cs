using System;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.AspNetCore.Routing;
using Microsoft.AspNetCore.Server.Kestrel.Core.Features;
using FalconetMinDataRate = Falconet.Server.MinDataRate;
using KestrelMinDataRate = Microsoft.AspNetCore.Server.Kestrel.Core.MinDataRate;

namespace Falconet.AspNetCore;

/// <summary>
/// Request features Kestrel offers beyond the basic ones: the minimum data rates of this request (Kestrel's feature types,
/// over Falconet's per-request rates), the request trailers, the bad-request error a body read found, and the route values.
/// </summary>
internal sealed partial class ConnectionFeatures<TContext> : IHttpMinRequestBodyDataRateFeature, IHttpMinResponseDataRateFeature,
    IHttpRequestTrailersFeature, IBadRequestExceptionFeature, IRouteValuesFeature
{
    private RequestHeaderDictionary? _trailers;
    private KestrelMinDataRate? _requestBodyRate;
    private KestrelMinDataRate? _responseRate;
    private RouteValueDictionary? _routeValues;

    // IRouteValuesFeature: routing replaces the dictionary when a route has values; made on first use otherwise.

    public RouteValueDictionary RouteValues
    {
        get => _routeValues ??= new RouteValueDictionary();
        set => _routeValues = value;
    }

    // IHttpMinRequestBodyDataRateFeature

    KestrelMinDataRate? IHttpMinRequestBodyDataRateFeature.MinDataRate
    {
        get => ToKestrel(_context.MinRequestBodyDataRate, ref _requestBodyRate);
        set => _context.MinRequestBodyDataRate = ToFalconet(value);
    }

    // IHttpMinResponseDataRateFeature

    KestrelMinDataRate? IHttpMinResponseDataRateFeature.MinDataRate
    {
        get => ToKestrel(_context.MinResponseDataRate, ref _responseRate);
        set => _context.MinResponseDataRate = ToFalconet(value);
    }

    // IHttpRequestTrailersFeature

    /// <summary>True once the body has been read to its end (at once for a request without a body).</summary>
    public bool Available => _context.Request.TrailersAvailable;

    public IHeaderDictionary Trailers
    {
        get
        {
            if (!Available)
            {
                throw new InvalidOperationException("The request trailers are not available yet: they come at the end of the body; read it to its end first.");
            }

            // The collection is the connection's (made on first use), so one adapter serves all its requests.
            return _trailers ??= new RequestHeaderDictionary(_context.Request.Trailers);
        }
    }

    // IBadRequestExceptionFeature

    public Exception? Error => _defaultRequestBody.Error;

    /// <summary>Kestrel's form of a rate, made again only when the rate in force changed.</summary>
    private static KestrelMinDataRate? ToKestrel(FalconetMinDataRate? rate, ref KestrelMinDataRate? cached)
    {
        if (rate is null)
        {
            return null;
        }

        if (cached is null || cached.BytesPerSecond != rate.BytesPerSecond || cached.GracePeriod != rate.GracePeriod)
        {
            cached = new KestrelMinDataRate(rate.BytesPerSecond, rate.GracePeriod);
        }

        return cached;
    }

    private static FalconetMinDataRate? ToFalconet(KestrelMinDataRate? rate)
        => rate is null ? null : new FalconetMinDataRate(rate.BytesPerSecond, rate.GracePeriod);
}
