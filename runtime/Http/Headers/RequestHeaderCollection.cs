using System;
using System.Collections.Generic;
using System.Numerics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text;
using Falconet.Text;
using Microsoft.Extensions.Primitives;

namespace Falconet.Http;

/// <summary>
/// Request headers as the parser fills them: a known name makes no string, and a value equal to a known value or to
/// the previous request's value on this object reuses that string.
/// </summary>
public abstract class RequestHeaderCollection : HeaderCollection
{
    private PreviousValues _previous;

    // For each slot, the identity of the bytes _previous holds when they came with one (an HPACK dynamic table entry: see
    // TryAppendMatched with a value id), else 0.
    private PreviousValueIds _previousIds;

    // The last header section parsed into this collection, as received, when it left only known headers each holding the
    // string still in its slot (see RememberSection); none when there is nothing to repeat.
    private RepeatedBytes _section;
    private ulong _sectionBits;
    private long? _sectionContentLength;

    /// <summary>An empty collection of the headers in <paramref name="table"/>.</summary>
    protected RequestHeaderCollection(HeaderTable table)
        : base(table)
    {
    }

    /// <summary>
    /// Adds a header from raw bytes: <paramref name="name"/> already validated as a token, <paramref name="value"/>
    /// trimmed. A known name makes no string; its value reuses a known or the previous request's string when equal.
    /// Returns false for a Content-Length that is not 1+ digits or that differs from an earlier one.
    /// </summary>
    public abstract bool TryAppend(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value);

    /// <summary>Adds a header from raw bytes like <see cref="TryAppend"/>.</summary>
    /// <exception cref="FormatException">Where <see cref="TryAppend"/> returns false.</exception>
    public void Append(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
    {
        if (!TryAppend(name, value))
        {
            throw new FormatException("Invalid Content-Length header value.");
        }
    }

    /// <summary>
    /// <see cref="TryAppend"/> once the name is matched: <paramref name="index"/> is what the collection's generated
    /// matcher returned for <paramref name="name"/> (a bit index, <see cref="HeaderTable.ContentLengthIndex"/>, or -1).
    /// </summary>
    protected internal bool TryAppendMatched(int index, ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
    {
        if ((uint)index < HeaderTable.ContentLengthIndex)
        {
            // The hot path of a kept-alive connection: the same value as the previous request, still in its slot.
            ulong bit = 1UL << index;
            if (((_bits | ~_reusable) & bit) == 0)
            {
                string previous = _previous[index]!;
                if (previous.Length == value.Length && Latin1.Equals(value, previous))
                {
                    _bits |= bit;
                    return true;
                }
            }

            AppendKnown(index, value, 0);
            return true;
        }

        if (index == HeaderTable.ContentLengthIndex)
        {
            if (!HeaderText.TryParseContentLength(value, out long length)
                || (_contentLength.HasValue && _contentLength.GetValueOrDefault() != length))
            {
                return false;
            }

            _contentLength = length;
            return true;
        }

        AppendUnknown(name, value);
        return true;
    }

    /// <summary>
    /// <see cref="TryAppendMatched(int, ReadOnlySpan{byte}, ReadOnlySpan{byte})"/> for a value whose bytes have an
    /// identity: a non-zero <paramref name="valueId"/> always comes with the same bytes (HTTP/2 gives each HPACK dynamic
    /// table entry one, unique in the process). A value with the identity of the previous request's string in this slot is
    /// that string: it is reused with no compare at all; any other value takes the usual path, and its identity is kept.
    /// </summary>
    internal bool TryAppendMatched(int index, ReadOnlySpan<byte> name, ReadOnlySpan<byte> value, ulong valueId)
    {
        if ((uint)index >= HeaderTable.ContentLengthIndex)
        {
            return TryAppendMatched(index, name, value);
        }

        ulong bit = 1UL << index;
        if (((_bits | ~_reusable) & bit) == 0)
        {
            if (_previousIds[index] == valueId && valueId != 0)
            {
                _bits |= bit;
                return true;
            }

            string previous = _previous[index]!;
            if (previous.Length == value.Length && Latin1.Equals(value, previous))
            {
                _bits |= bit;
                _previousIds[index] = valueId;
                return true;
            }
        }

        AppendKnown(index, value, valueId);
        return true;
    }

    // A known header whose value is not the one still in its slot: reuse the previous or a known string when equal, else
    // make one; a repeated header joins the values already present.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void AppendKnown(int index, ReadOnlySpan<byte> value, ulong valueId)
    {
        // A slot changes: the section remembered no longer describes what the slots hold.
        _section.Forget();
        ulong bit = 1UL << index;
        ref StringValues slot = ref _values[index];
        ref string? previous = ref _previous[index];

        // When the fast path ran (first value, slot still holding the previous string), it has already found the
        // previous string unequal: compare it again only when that path did not run.
        bool previousCompared = ((_bits | ~_reusable) & bit) == 0;
        string text = !previousCompared && previous is not null && previous.Length == value.Length && Latin1.Equals(value, previous)
            ? previous
            : HeaderText.GetValueString(value, _table.GetKnownValues(index));
        _replacedValues |= bit;
        if ((_bits & bit) == 0)
        {
            slot = text;
            previous = text;
            _previousIds[index] = valueId;
            _reusable |= bit;
            _bits |= bit;
        }
        else
        {
            slot = StringValues.Concat(slot, text);
            _reusable &= ~bit;
        }
    }

    /// <summary>The longest header section <see cref="RememberSection"/> keeps: a browser's usual head fits, a large cookie does not.</summary>
    internal const int MaxRepeatedSectionLength = 1024;

    /// <summary>
    /// After <see cref="HeaderCollection.Clear"/>: when <paramref name="received"/> starts with the bytes of the section
    /// remembered last, including its empty line, the headers become what that section's parse left (the same bytes parse
    /// to the same headers, the same strings still in their slots) and the section's length is returned; otherwise 0 and
    /// nothing changes.
    /// </summary>
    /// <remarks>
    /// A kept-alive client usually repeats its header lines byte for byte: one compare of the run replaces the walk, the
    /// name matches and a value compare per line. The slots are known to be untouched because every write of one
    /// (<see cref="AppendKnown"/>, <see cref="HeaderCollection.SetKnown"/>) either forgets the section or clears the
    /// header's bit of <c>_reusable</c>, which is checked here.
    /// </remarks>
    internal int TryRepeatSection(ReadOnlySpan<byte> received)
    {
        int length;
        if ((_reusable & _sectionBits) != _sectionBits || (length = _section.Match(received)) == 0)
        {
            return 0;
        }

        _bits = _sectionBits;
        _contentLength = _sectionContentLength;
        return length;
    }

    /// <summary>Changes whenever the kept section is forgotten or replaced (see <see cref="RepeatedBytes.Stamp"/>).</summary>
    internal int SectionStamp => _section.Stamp;

    /// <summary>
    /// <see cref="TryRepeatSection"/> for a caller that has already found the kept section's bytes at the start of the next head
    /// (the section was kept under <see cref="SectionStamp"/> and it has not changed since): the headers become what that
    /// section's parse left, unless a slot was written since; false then, and nothing changes.
    /// </summary>
    internal bool TryRestoreSection()
    {
        if ((_reusable & _sectionBits) != _sectionBits || _section.Length == 0)
        {
            return false;
        }

        _bits = _sectionBits;
        _contentLength = _sectionContentLength;
        _unknown?.Clear();
        return true;
    }

    /// <summary>
    /// Keeps <paramref name="section"/>, the bytes of the header section just parsed into this collection (up to and including
    /// its empty line), for <see cref="TryRepeatSection"/>: only when every header present is a known one holding the one
    /// string its slot keeps, and the section is at most <see cref="MaxRepeatedSectionLength"/> bytes; otherwise the
    /// previous section is forgotten. <see cref="RepeatedBytes"/> decides the rest: the first section offered is not kept,
    /// so a connection that makes one request holds no copy, and a connection whose sections keep changing stops keeping.
    /// </summary>
    internal void RememberSection(ReadOnlySpan<byte> section)
    {
        if ((_reusable & _bits) != _bits || _unknown is { Count: > 0 })
        {
            _section.Forget();
            return;
        }

        if (_section.Keep(section, MaxRepeatedSectionLength))
        {
            _sectionBits = _bits;
            _sectionContentLength = _contentLength;
        }
    }

    private void AppendUnknown(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
    {
        _unknown ??= new Dictionary<string, StringValues>(StringComparer.OrdinalIgnoreCase);
        string key = Encoding.Latin1.GetString(name);
        string text = Encoding.Latin1.GetString(value);
        ref StringValues slot = ref CollectionsMarshal.GetValueRefOrAddDefault(_unknown, key, out bool exists);
        slot = exists ? StringValues.Concat(slot, text) : new StringValues(text);
    }

    /// <summary>One string per bit of the bit set, inline in this object: the last value parsed for that header on this connection.</summary>
    [InlineArray(HeaderTable.MaxKnownHeaders)]
    private struct PreviousValues
    {
        private string? _element;
    }

    /// <summary>The identity of each previous value's bytes, or 0.</summary>
    [InlineArray(HeaderTable.MaxKnownHeaders)]
    private struct PreviousValueIds
    {
        private ulong _element;
    }
}
