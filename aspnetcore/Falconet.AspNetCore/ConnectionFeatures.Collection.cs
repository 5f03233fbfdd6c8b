using System;
using System.Collections;
using System.Collections.Generic;
using Microsoft.AspNetCore.Http.Features;

namespace Falconet.AspNetCore;

/// <summary>The feature collection: a field per feature this object implements (replaceable), other features in a reused list.</summary>
internal sealed partial class ConnectionFeatures<TContext>
{
    // Indexes of the features this object implements; a slot holds this object or what the application set instead.
    private const int RequestSlot = 0;
    private const int ResponseSlot = 1;
    private const int ResponseBodySlot = 2;
    private const int RequestBodyPipeSlot = 3;
    private const int BodyDetectionSlot = 4;
    private const int ConnectionSlot = 5;
    private const int LifetimeSlot = 6;
    private const int IdentifierSlot = 7;
    private const int MaxBodySizeSlot = 8;
    private const int BodyControlSlot = 9;
    private const int SlotCount = 10;

    private static readonly Type[] s_slotTypes =
    [
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
            if (slot >= 0)
            {
                return _slots[slot];
            }

            foreach (KeyValuePair<Type, object> entry in _extra)
            {
                if (entry.Key == key)
                {
                    return entry.Value;
                }
            }

            return null;
        }
        set
        {
            ArgumentNullException.ThrowIfNull(key);
            _revision++;
            int slot = SlotOf(key);
            if (slot >= 0)
            {
                _slots[slot] = value;
                return;
            }

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
    }

    public TFeature? Get<TFeature>() => (TFeature?)this[typeof(TFeature)];

    public void Set<TFeature>(TFeature? instance) => this[typeof(TFeature)] = instance;

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

    /// <summary>Every slot back to this object, the extra features dropped, and a new revision so the framework's caches refresh.</summary>
    private void ResetFeatures()
    {
        for (int i = 0; i < SlotCount; i++)
        {
            _slots[i] = this;
        }

        _extra.Clear();
        Headers = _defaultRequestHeaders;
        Body = _defaultRequestBody;
        ResponseHeaders = _defaultResponseHeaders;
        ResponseBody = _defaultResponseBody;
        _revision++;
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
}
