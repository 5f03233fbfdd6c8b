using System;
using System.Collections;
using System.Collections.Generic;
using System.Diagnostics.CodeAnalysis;
using Falconet.Http;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Primitives;

namespace Falconet.AspNetCore;

/// <summary>
/// <see cref="IHeaderDictionary"/> over one of Falconet's generated header collections, without copying: every call
/// goes to the collection's <see cref="IDictionary{TKey, TValue}"/> surface, and the most used typed headers to its
/// typed properties. One per connection, like the collection it wraps.
/// </summary>
internal abstract class HeaderDictionary : IHeaderDictionary
{
    private readonly IDictionary<string, StringValues> _headers;

    protected HeaderDictionary(IDictionary<string, StringValues> headers)
    {
        _headers = headers;
    }

    public abstract long? ContentLength { get; set; }

    /// <summary>True when changes are refused (response headers once the response has started).</summary>
    public virtual bool IsReadOnly => false;

    public int Count => _headers.Count;

    public ICollection<string> Keys => _headers.Keys;

    public ICollection<StringValues> Values => _headers.Values;

    // Unlike IDictionary, a missing header reads as empty and setting an empty value removes it.
    public StringValues this[string key]
    {
        get => _headers.TryGetValue(key, out StringValues value) ? value : StringValues.Empty;
        set
        {
            ThrowIfReadOnly();
            if (StringValues.IsNullOrEmpty(value))
            {
                _headers.Remove(key);
            }
            else
            {
                _headers[key] = value;
            }
        }
    }

    StringValues IDictionary<string, StringValues>.this[string key]
    {
        get => _headers[key];
        set => this[key] = value;
    }

    public void Add(string key, StringValues value)
    {
        ThrowIfReadOnly();
        _headers.Add(key, value);
    }

    public void Add(KeyValuePair<string, StringValues> item) => Add(item.Key, item.Value);

    public void Clear()
    {
        ThrowIfReadOnly();
        _headers.Clear();
    }

    public bool Contains(KeyValuePair<string, StringValues> item) => _headers.Contains(item);

    public bool ContainsKey(string key) => _headers.ContainsKey(key);

    public void CopyTo(KeyValuePair<string, StringValues>[] array, int arrayIndex) => _headers.CopyTo(array, arrayIndex);

    public bool Remove(string key)
    {
        ThrowIfReadOnly();
        return _headers.Remove(key);
    }

    public bool Remove(KeyValuePair<string, StringValues> item)
    {
        ThrowIfReadOnly();
        return _headers.Remove(item);
    }

    public bool TryGetValue(string key, [MaybeNullWhen(false)] out StringValues value) => _headers.TryGetValue(key, out value);

    public IEnumerator<KeyValuePair<string, StringValues>> GetEnumerator() => _headers.GetEnumerator();

    IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();

    protected void ThrowIfReadOnly()
    {
        if (IsReadOnly)
        {
            throw new InvalidOperationException("Headers are read-only, response has already started.");
        }
    }
}

/// <summary>The request's <see cref="RequestHeaders"/> as an <see cref="IHeaderDictionary"/>.</summary>
internal sealed class RequestHeaderDictionary : HeaderDictionary, IHeaderDictionary
{
    private readonly RequestHeaders _headers;

    public RequestHeaderDictionary(RequestHeaders headers)
        : base(headers)
    {
        _headers = headers;
    }

    public override long? ContentLength
    {
        get => _headers.ContentLength;
        set => _headers.ContentLength = value;
    }

    StringValues IHeaderDictionary.Host
    {
        get => _headers.Host;
        set => _headers.Host = value;
    }

    StringValues IHeaderDictionary.ContentType
    {
        get => _headers.ContentType;
        set => _headers.ContentType = value;
    }

    StringValues IHeaderDictionary.Accept
    {
        get => _headers.Accept;
        set => _headers.Accept = value;
    }
}

/// <summary>The response's <see cref="ResponseHeaders"/> as an <see cref="IHeaderDictionary"/>, read-only once the response started.</summary>
internal sealed class ResponseHeaderDictionary : HeaderDictionary, IHeaderDictionary
{
    private readonly ResponseHeaders _headers;
    private readonly Func<bool> _hasStarted;

    public ResponseHeaderDictionary(ResponseHeaders headers, Func<bool> hasStarted)
        : base(headers)
    {
        _headers = headers;
        _hasStarted = hasStarted;
    }

    public override bool IsReadOnly => _hasStarted();

    public override long? ContentLength
    {
        get => _headers.ContentLength;
        set
        {
            ThrowIfReadOnly();
            _headers.ContentLength = value;
        }
    }

    StringValues IHeaderDictionary.ContentType
    {
        get => _headers.ContentType;
        set
        {
            ThrowIfReadOnly();
            _headers.ContentType = value;
        }
    }
}
