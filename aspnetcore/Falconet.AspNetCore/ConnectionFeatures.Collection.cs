using System;
using System.Collections;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using Microsoft.AspNetCore.Connections.Features;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.AspNetCore.Server.Kestrel.Core.Features;

namespace Falconet.AspNetCore;

/// <summary>
/// The feature collection: a slot per feature this object implements (replaceable) and per feature the framework sets on
/// every request (endpoint, route values, activity), other features in a reused list. The TLS features are there on TLS
/// connections only.
/// </summary>
internal sealed partial class ConnectionFeatures<TContext>
{
    // Indexes of the features this object implements; a slot holds this object or what the application set instead.
    // The framework asks for the endpoint feature five times a request: first in every lookup.
    private const int EndpointSlot = 0;
    private const int RequestSlot = 1;
    private const int ResponseSlot = 2;
    private const int ResponseBodySlot = 3;
    private const int RequestBodyPipeSlot = 4;
    private const int BodyDetectionSlot = 5;
    private const int ConnectionSlot = 6;
    private const int LifetimeSlot = 7;
    private const int IdentifierSlot = 8;
    private const int MaxBodySizeSlot = 9;
    private const int BodyControlSlot = 10;
    private const int UpgradeSlot = 11;
    private const int ExtendedConnectSlot = 12;
    private const int MinRequestBodyDataRateSlot = 13;
    private const int MinResponseDataRateSlot = 14;
    private const int RequestTrailersSlot = 15;
    private const int BadRequestExceptionSlot = 16;
    private const int PersistentStateSlot = 17;
    private const int ConnectionIdSlot = 18;
    private const int ConnectionItemsSlot = 19;
    private const int ConnectionLifetimeSlot = 20;
    private const int ConnectionLifetimeNotificationSlot = 21;
    private const int ConnectionCompleteSlot = 22;
    private const int RouteValuesSlot = 23;

    // Implemented by this object on TLS connections only (empty on plain ones).
    private const int TlsConnectionSlot = 24;
    private const int TlsHandshakeSlot = 25;
    private const int TlsApplicationProtocolSlot = 26;
    private const int HttpsCompressionSlot = 27;

    // Implemented by this object on HTTP/2 requests only.
    private const int ResponseTrailersSlot = 28;
    private const int ResetSlot = 29;
    private const int Http2StreamIdSlot = 30;

    // Set by the framework on every request; empty after a reset.
    private const int ActivitySlot = 31;
    private const int SlotCount = 32;
    private const int ImplementedSlots = 24;

    private static readonly Type[] s_slotTypes =
    [
        typeof(IEndpointFeature),
        typeof(IHttpRequestFeature),
        typeof(IHttpResponseFeature),
        typeof(IHttpResponseBodyFeature),
        typeof(IRequestBodyPipeFeature),
        typeof(IHttpRequestBodyDetectionFeature),
        typeof(IHttpConnectionFeature),
        typeof(IHttpRequestLifetimeFeature),
        typeof(IHttpRequestIdentifierFeature),
        typeof(IHttpMaxRequestBodySizeFeature),
        typeof(IHttpBodyControlFeature),
        typeof(IHttpUpgradeFeature),
        typeof(IHttpExtendedConnectFeature),
        typeof(IHttpMinRequestBodyDataRateFeature),
        typeof(IHttpMinResponseDataRateFeature),
        typeof(IHttpRequestTrailersFeature),
        typeof(IBadRequestExceptionFeature),
        typeof(IPersistentStateFeature),
        typeof(IConnectionIdFeature),
        typeof(IConnectionItemsFeature),
        typeof(IConnectionLifetimeFeature),
        typeof(IConnectionLifetimeNotificationFeature),
        typeof(IConnectionCompleteFeature),
        typeof(IRouteValuesFeature),
        typeof(ITlsConnectionFeature),
        typeof(ITlsHandshakeFeature),
        typeof(ITlsApplicationProtocolFeature),
        typeof(IHttpsCompressionFeature),
        typeof(IHttpResponseTrailersFeature),
        typeof(IHttpResetFeature),
        typeof(IHttp2StreamIdFeature),
        typeof(IHttpActivityFeature),
    ];

    private readonly object?[] _slots = new object?[SlotCount];
    private readonly List<KeyValuePair<Type, object>> _extra = new();

    bool IFeatureCollection.IsReadOnly => false;

    public int Revision => _revision;

    public object? this[Type key]
    {
        get
        {
            int slot = SlotOf(key);
            return slot >= 0 ? _slots[slot] : FindExtra(key);
        }
        set
        {
            ArgumentNullException.ThrowIfNull(key);
            _revision++;
            int slot = SlotOf(key);
            if (slot >= 0)
            {
                _slots[slot] = value;
            }
            else
            {
                SetExtra(key, value);
            }
        }
    }

    public TFeature? Get<TFeature>()
    {
        int slot = SlotOf<TFeature>();
        return (TFeature?)(slot >= 0 ? _slots[slot] : FindExtra(typeof(TFeature)));
    }

    public void Set<TFeature>(TFeature? instance)
    {
        _revision++;
        int slot = SlotOf<TFeature>();
        if (slot >= 0)
        {
            _slots[slot] = instance;
        }
        else
        {
            SetExtra(typeof(TFeature), instance);
        }
    }

    public IEnumerator<KeyValuePair<Type, object>> GetEnumerator()
    {
        for (int i = 0; i < SlotCount; i++)
        {
            if (_slots[i] is { } feature)
            {
                yield return new KeyValuePair<Type, object>(s_slotTypes[i], feature);
            }
        }

        foreach (KeyValuePair<Type, object> entry in _extra)
        {
            yield return entry;
        }
    }

    IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();

    /// <summary>Every slot back to this object (or empty), the extra features dropped, and a new revision so the framework's caches refresh.</summary>
    private void ResetFeatures()
    {
        for (int i = 0; i < ImplementedSlots; i++)
        {
            _slots[i] = this;
        }

        object? tls = _tls is null ? null : this;
        _slots[TlsConnectionSlot] = tls;
        _slots[TlsHandshakeSlot] = tls;
        _slots[TlsApplicationProtocolSlot] = tls;
        _slots[HttpsCompressionSlot] = tls;
        object? http2 = _context.StreamId != 0 ? this : null;
        _slots[ResponseTrailersSlot] = http2;
        _slots[ResetSlot] = http2;
        _slots[Http2StreamIdSlot] = http2;
        _responseTrailers = null;
        _slots[EndpointSlot] = null;
        _slots[ActivitySlot] = null;
        _extra.Clear();
        Headers = _defaultRequestHeaders;
        Body = _defaultRequestBody;
        ResponseHeaders = _defaultResponseHeaders;
        ResponseBody = _defaultResponseBody;
        _revision++;
    }

    private object? FindExtra(Type key)
    {
        foreach (KeyValuePair<Type, object> entry in _extra)
        {
            if (entry.Key == key)
            {
                return entry.Value;
            }
        }

        return null;
    }

    private void SetExtra(Type key, object? value)
    {
        for (int i = 0; i < _extra.Count; i++)
        {
            if (_extra[i].Key == key)
            {
                if (value is null)
                {
                    _extra.RemoveAt(i);
                }
                else
                {
                    _extra[i] = new KeyValuePair<Type, object>(key, value);
                }

                return;
            }
        }

        if (value is not null)
        {
            _extra.Add(new KeyValuePair<Type, object>(key, value));
        }
    }

    private static int SlotOf(Type key)
    {
        Type[] types = s_slotTypes;
        for (int i = 0; i < types.Length; i++)
        {
            if (types[i] == key)
            {
                return i;
            }
        }

        return -1;
    }

    // The same as SlotOf(typeof(TFeature)), but each comparison is of type handles the JIT knows: no Type object, no loop.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static int SlotOf<TFeature>()
    {
        if (typeof(TFeature) == typeof(IEndpointFeature))
        {
            return EndpointSlot;
        }

        if (typeof(TFeature) == typeof(IHttpRequestFeature))
        {
            return RequestSlot;
        }

        if (typeof(TFeature) == typeof(IHttpResponseFeature))
        {
            return ResponseSlot;
        }

        if (typeof(TFeature) == typeof(IHttpResponseBodyFeature))
        {
            return ResponseBodySlot;
        }

        if (typeof(TFeature) == typeof(IRequestBodyPipeFeature))
        {
            return RequestBodyPipeSlot;
        }

        if (typeof(TFeature) == typeof(IHttpRequestBodyDetectionFeature))
        {
            return BodyDetectionSlot;
        }

        if (typeof(TFeature) == typeof(IHttpConnectionFeature))
        {
            return ConnectionSlot;
        }

        if (typeof(TFeature) == typeof(IHttpRequestLifetimeFeature))
        {
            return LifetimeSlot;
        }

        if (typeof(TFeature) == typeof(IHttpRequestIdentifierFeature))
        {
            return IdentifierSlot;
        }

        if (typeof(TFeature) == typeof(IHttpMaxRequestBodySizeFeature))
        {
            return MaxBodySizeSlot;
        }

        if (typeof(TFeature) == typeof(IHttpBodyControlFeature))
        {
            return BodyControlSlot;
        }

        if (typeof(TFeature) == typeof(IHttpUpgradeFeature))
        {
            return UpgradeSlot;
        }

        if (typeof(TFeature) == typeof(IHttpExtendedConnectFeature))
        {
            return ExtendedConnectSlot;
        }

        if (typeof(TFeature) == typeof(IHttpMinRequestBodyDataRateFeature))
        {
            return MinRequestBodyDataRateSlot;
        }

        if (typeof(TFeature) == typeof(IHttpMinResponseDataRateFeature))
        {
            return MinResponseDataRateSlot;
        }

        if (typeof(TFeature) == typeof(IHttpRequestTrailersFeature))
        {
            return RequestTrailersSlot;
        }

        if (typeof(TFeature) == typeof(IBadRequestExceptionFeature))
        {
            return BadRequestExceptionSlot;
        }

        if (typeof(TFeature) == typeof(IPersistentStateFeature))
        {
            return PersistentStateSlot;
        }

        if (typeof(TFeature) == typeof(IConnectionIdFeature))
        {
            return ConnectionIdSlot;
        }

        if (typeof(TFeature) == typeof(IConnectionItemsFeature))
        {
            return ConnectionItemsSlot;
        }

        if (typeof(TFeature) == typeof(IConnectionLifetimeFeature))
        {
            return ConnectionLifetimeSlot;
        }

        if (typeof(TFeature) == typeof(IConnectionLifetimeNotificationFeature))
        {
            return ConnectionLifetimeNotificationSlot;
        }

        if (typeof(TFeature) == typeof(IConnectionCompleteFeature))
        {
            return ConnectionCompleteSlot;
        }

        if (typeof(TFeature) == typeof(ITlsConnectionFeature))
        {
            return TlsConnectionSlot;
        }

        if (typeof(TFeature) == typeof(ITlsHandshakeFeature))
        {
            return TlsHandshakeSlot;
        }

        if (typeof(TFeature) == typeof(ITlsApplicationProtocolFeature))
        {
            return TlsApplicationProtocolSlot;
        }

        if (typeof(TFeature) == typeof(IHttpsCompressionFeature))
        {
            return HttpsCompressionSlot;
        }

        if (typeof(TFeature) == typeof(IRouteValuesFeature))
        {
            return RouteValuesSlot;
        }

        if (typeof(TFeature) == typeof(IHttpResponseTrailersFeature))
        {
            return ResponseTrailersSlot;
        }

        if (typeof(TFeature) == typeof(IHttpResetFeature))
        {
            return ResetSlot;
        }

        if (typeof(TFeature) == typeof(IHttp2StreamIdFeature))
        {
            return Http2StreamIdSlot;
        }

        return typeof(TFeature) == typeof(IHttpActivityFeature) ? ActivitySlot : -1;
    }
}
