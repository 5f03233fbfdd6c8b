using System;
using System.Collections;
using System.Collections.Generic;
using System.ComponentModel;
using System.Numerics;
using System.Runtime.CompilerServices;
using Microsoft.Extensions.Primitives;

namespace Falconet.Http;

/// <summary>
/// The storage and dictionary surface every generated header collection shares: a slot per known header, a bit set
/// of the present ones, Content-Length as a number, and headers outside the schema in a dictionary made on first use.
/// </summary>
/// <remarks>
/// Nothing here varies with the schema: the generated part of a collection is its <see cref="HeaderTable"/>, a typed
/// property per known header (<see cref="GetKnown"/> and <see cref="SetKnown"/> with a constant index) and, for
/// request headers, the name matcher. No member is virtual but <see cref="RequestHeaderCollection.TryAppend"/>, which
/// the server does not call: it matches names through the header set it is specialized for.
/// </remarks>
public abstract class HeaderCollection : IDictionary<string, StringValues>
{
    private protected readonly HeaderTable _table;
    private protected ulong _bits;

    // Bit i set: slot i holds exactly the last value string parsed for header i on this object, so an equal value of the
    // next request only sets its bit (see RequestHeaderCollection). Only parsing sets these bits.
    private protected ulong _reusable;
    private protected long? _contentLength;
    private protected Dictionary<string, StringValues>? _unknown;
    private protected KnownValueSlots _values;

    // Bit i set: slot i was given a value other than the object it held when the last consumer kept the slots' values
    // (ResponseHeaderCollection.TryKeepKnownValues). A slot given the object it already holds is left as it is.
    private protected ulong _replacedValues;

    // StringValues keeps its string (or string[]) in its one field: then a value's identity is that object, read with one
    // load. Checked once; were it ever otherwise, every value given to a slot would count as replaced.
    private static readonly bool s_valueIsOneReference = ValueIsOneReference();
    private string? _contentLengthText;
    private long _contentLengthTextValue;

    private protected HeaderCollection(HeaderTable table)
    {
        ArgumentNullException.ThrowIfNull(table);
        _table = table;
    }

    /// <summary>The table of the collection's known headers.</summary>
    internal HeaderTable KnownHeaderTable => _table;

    /// <summary>The bit set of the known headers present.</summary>
    internal ulong PresentBits => _bits;

    /// <summary>The headers outside the table, or null when none was ever set.</summary>
    internal Dictionary<string, StringValues>? UnknownHeaders => _unknown;

    /// <summary>The value of the known header at a bit index, whether present or not (<see cref="PresentBits"/> says).</summary>
    internal ref readonly StringValues KnownValue(int index) => ref _values[index];

    /// <summary>The header at a bit index of the table: empty when absent.</summary>
    /// <remarks>For generated typed properties, which pass a constant index: inlined, it is one bit test and one load.</remarks>
    [EditorBrowsable(EditorBrowsableState.Never)]
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public StringValues GetKnown(int index) => (_bits & (1UL << index)) != 0 ? _values[index] : default;

    /// <summary>Sets the header at a bit index of the table; an empty value removes it.</summary>
    [EditorBrowsable(EditorBrowsableState.Never)]
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void SetKnown(int index, StringValues value)
    {
        ulong bit = 1UL << index;
        if (value.Count == 0)
        {
            _bits &= ~bit;
        }
        else
        {
            // The same object again (a shared Date value, an application's static Content-Type) is not stored again: no
            // write barrier, and the slot still counts as holding what a consumer kept.
            ref StringValues slot = ref _values[index];
            if (!s_valueIsOneReference || !ReferenceEquals(ValueObject(ref slot), ValueObject(ref value)))
            {
                slot = value;
                _replacedValues |= bit;
            }

            _bits |= bit;
            _reusable &= ~bit;
        }
    }

    /// <summary>The string or string[] a value holds, when <see cref="s_valueIsOneReference"/> (otherwise meaningless).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private protected static object? ValueObject(ref StringValues value) => Unsafe.As<StringValues, object?>(ref value);

    /// <summary>True when the values of the slots can be told apart by <see cref="ValueObject"/>.</summary>
    private protected static bool ValueIdentityKnown => s_valueIsOneReference;

    private static bool ValueIsOneReference()
    {
        string probe = "probe";
        var value = new StringValues(probe);
        return Unsafe.SizeOf<StringValues>() == IntPtr.Size && ReferenceEquals(Unsafe.As<StringValues, object?>(ref value), probe);
    }

    /// <summary>The Content-Length header as a number; null when absent.</summary>
    /// <exception cref="ArgumentOutOfRangeException">The value is negative.</exception>
    public long? ContentLength
    {
        get => _contentLength;
        set
        {
            if (value < 0)
            {
                throw new ArgumentOutOfRangeException(nameof(value), "Content-Length cannot be negative.");
            }

            _contentLength = value;
        }
    }

    /// <summary>The number of headers: known ones, Content-Length and unknown ones.</summary>
    public int Count => BitOperations.PopCount(_bits) + (_contentLength.HasValue ? 1 : 0) + (_unknown?.Count ?? 0);

    /// <summary>Always false: the collection is mutable.</summary>
    public bool IsReadOnly => false;

    /// <summary>The names of the headers present, in enumeration order.</summary>
    public ICollection<string> Keys => Collect(static pair => pair.Key);

    /// <summary>The values of the headers present, in enumeration order.</summary>
    public ICollection<StringValues> Values => Collect(static pair => pair.Value);

    /// <summary>
    /// Gets or replaces a header by name (any case). Reading a header that is absent gives empty
    /// <see cref="StringValues"/>, as ASP.NET Core's IHeaderDictionary does; setting an empty value removes it.
    /// </summary>
    public StringValues this[string key]
    {
        get => TryGetValue(key, out StringValues value) ? value : default;
        set => SetValue(key, value);
    }

    /// <summary>Removes every header but keeps this object, its dictionary and the values for reuse by the next request.</summary>
    public void Clear()
    {
        _bits = 0;
        _contentLength = null;
        _unknown?.Clear();
    }

    /// <summary>Gets a header by name (any case).</summary>
    public bool TryGetValue(string key, out StringValues value)
    {
        int index = _table.IndexOf(key);
        if ((uint)index < HeaderTable.ContentLengthIndex)
        {
            if ((_bits & (1UL << index)) != 0)
            {
                value = _values[index];
                return true;
            }
        }
        else if (index == HeaderTable.ContentLengthIndex)
        {
            if (_contentLength is long length)
            {
                value = ContentLengthText(length);
                return true;
            }
        }
        else if (_unknown is not null && _unknown.TryGetValue(key, out value))
        {
            return true;
        }

        value = default;
        return false;
    }

    /// <summary>True when the header is present.</summary>
    public bool ContainsKey(string key) => TryGetValue(key, out _);

    /// <summary>Adds a header that is not present yet.</summary>
    /// <exception cref="ArgumentException">The header is already present.</exception>
    public void Add(string key, StringValues value)
    {
        if (ContainsKey(key))
        {
            throw new ArgumentException("The header '" + key + "' is already present.", nameof(key));
        }

        SetValue(key, value);
    }

    /// <summary>Removes a header by name (any case).</summary>
    public bool Remove(string key)
    {
        int index = _table.IndexOf(key);
        if ((uint)index < HeaderTable.ContentLengthIndex)
        {
            ulong bit = 1UL << index;
            bool present = (_bits & bit) != 0;
            _bits &= ~bit;
            return present;
        }

        if (index == HeaderTable.ContentLengthIndex)
        {
            bool present = _contentLength.HasValue;
            _contentLength = null;
            return present;
        }

        return _unknown is not null && _unknown.Remove(key);
    }

    /// <summary>Enumerates known headers by bit, then Content-Length, then unknown headers, without allocating.</summary>
    public Enumerator GetEnumerator() => new(this);

    void ICollection<KeyValuePair<string, StringValues>>.Add(KeyValuePair<string, StringValues> item) => Add(item.Key, item.Value);

    bool ICollection<KeyValuePair<string, StringValues>>.Contains(KeyValuePair<string, StringValues> item) =>
        TryGetValue(item.Key, out StringValues value) && value == item.Value;

    void ICollection<KeyValuePair<string, StringValues>>.CopyTo(KeyValuePair<string, StringValues>[] array, int arrayIndex)
    {
        ArgumentNullException.ThrowIfNull(array);
        if (arrayIndex < 0 || arrayIndex > array.Length - Count)
        {
            throw new ArgumentOutOfRangeException(nameof(arrayIndex));
        }

        foreach (KeyValuePair<string, StringValues> pair in this)
        {
            array[arrayIndex++] = pair;
        }
    }

    bool ICollection<KeyValuePair<string, StringValues>>.Remove(KeyValuePair<string, StringValues> item) =>
        TryGetValue(item.Key, out StringValues value) && value == item.Value && Remove(item.Key);

    IEnumerator<KeyValuePair<string, StringValues>> IEnumerable<KeyValuePair<string, StringValues>>.GetEnumerator() => GetEnumerator();

    IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();

    private List<T> Collect<T>(Func<KeyValuePair<string, StringValues>, T> select)
    {
        var items = new List<T>(Count);
        foreach (KeyValuePair<string, StringValues> pair in this)
        {
            items.Add(select(pair));
        }

        return items;
    }

    private void SetValue(string key, StringValues value)
    {
        ArgumentNullException.ThrowIfNull(key);
        int index = _table.IndexOf(key);
        if ((uint)index < HeaderTable.ContentLengthIndex)
        {
            SetKnown(index, value);
        }
        else if (index == HeaderTable.ContentLengthIndex)
        {
            _contentLength = value.Count == 0 ? null : HeaderText.ParseContentLength(value);
        }
        else if (value.Count == 0)
        {
            _unknown?.Remove(key);
        }
        else
        {
            _unknown ??= new Dictionary<string, StringValues>(StringComparer.OrdinalIgnoreCase);
            _unknown[key] = value;
        }
    }

    // Content-Length as text for the dictionary surface, formatted once per distinct value rather than on every read.
    private string ContentLengthText(long length)
    {
        if (_contentLengthText is null || _contentLengthTextValue != length)
        {
            _contentLengthText = HeaderText.FormatContentLength(length);
            _contentLengthTextValue = length;
        }

        return _contentLengthText;
    }

    /// <summary>One value per bit of the bit set, inline in the collection: no array to follow, no bounds to check for a constant index.</summary>
    [InlineArray(HeaderTable.MaxKnownHeaders)]
    private protected struct KnownValueSlots
    {
        private StringValues _element;
    }

    /// <summary>Enumerates the headers of a collection: known headers by bit, then Content-Length, then unknown headers.</summary>
    public struct Enumerator : IEnumerator<KeyValuePair<string, StringValues>>
    {
        private readonly HeaderCollection _headers;
        private ulong _remaining;
        private Stage _stage;
        private Dictionary<string, StringValues>.Enumerator _unknown;
        private KeyValuePair<string, StringValues> _current;

        internal Enumerator(HeaderCollection headers)
        {
            _headers = headers;
            _remaining = headers._bits;
            _stage = Stage.KnownHeaders;
            _unknown = default;
            _current = default;
        }

        /// <summary>The current header.</summary>
        public readonly KeyValuePair<string, StringValues> Current => _current;

        readonly object IEnumerator.Current => _current;

        /// <summary>Moves to the next header.</summary>
        public bool MoveNext()
        {
            if (_stage == Stage.KnownHeaders)
            {
                if (_remaining != 0)
                {
                    int index = BitOperations.TrailingZeroCount(_remaining);
                    _remaining &= _remaining - 1;
                    _current = new KeyValuePair<string, StringValues>(_headers._table.GetName(index), _headers._values[index]);
                    return true;
                }

                _stage = Stage.UnknownHeadersNotStarted;
                if (_headers._contentLength is long length)
                {
                    _current = new KeyValuePair<string, StringValues>(HeaderTable.ContentLengthName, _headers.ContentLengthText(length));
                    return true;
                }
            }

            if (_stage == Stage.UnknownHeadersNotStarted)
            {
                if (_headers._unknown is not { Count: > 0 } unknown)
                {
                    _stage = Stage.Ended;
                    _current = default;
                    return false;
                }

                _unknown = unknown.GetEnumerator();
                _stage = Stage.UnknownHeaders;
            }

            if (_stage == Stage.UnknownHeaders && _unknown.MoveNext())
            {
                _current = _unknown.Current;
                return true;
            }

            _stage = Stage.Ended;
            _current = default;
            return false;
        }

        /// <summary>Starts the enumeration again.</summary>
        public void Reset()
        {
            _remaining = _headers._bits;
            _stage = Stage.KnownHeaders;
            _unknown = default;
            _current = default;
        }

        /// <summary>Nothing to release.</summary>
        public readonly void Dispose()
        {
        }

        /// <summary>Where the enumeration is, in the order headers are yielded.</summary>
        private enum Stage : byte
        {
            /// <summary>Known headers, one per set bit of what remains, lowest bit first; Content-Length (kept apart as a number) is yielded on leaving.</summary>
            KnownHeaders,

            /// <summary>Known headers and Content-Length are done; the unknown headers' dictionary is looked at next.</summary>
            UnknownHeadersNotStarted,

            /// <summary>Unknown headers, through the dictionary's own enumerator.</summary>
            UnknownHeaders,

            /// <summary>Every header was yielded: MoveNext returns false until Reset.</summary>
            Ended,
        }
    }
}
