using System;
using System.Buffers;
using System.Collections.Generic;
using System.Numerics;
using Microsoft.Extensions.Primitives;

namespace Falconet.Http;

/// <summary>Response headers as the server writes them: each known header from the precomputed "\r\nName: " bytes of its table.</summary>
public abstract class ResponseHeaderCollection : HeaderCollection
{
    /// <summary>An empty collection of the headers in <paramref name="table"/>.</summary>
    protected ResponseHeaderCollection(HeaderTable table)
        : base(table)
    {
    }

    /// <summary>The bit set of the known headers present.</summary>
    internal ulong KnownBits => _bits;

    /// <summary>
    /// Writes every header as "\r\nName: value": known headers by bit from precomputed name bytes, Content-Length as
    /// digits, then unknown headers; a header with several values is written once per value. The caller writes the
    /// status line (without its CRLF) before and "\r\n\r\n" after.
    /// </summary>
    /// <exception cref="System.InvalidOperationException">A value holds a control character or a character above U+00FF, or an unknown name is not a token.</exception>
    public void CopyTo<TWriter>(ref TWriter writer)
        where TWriter : IBufferWriter<byte>
    {
        // Checked and measured first, then written into one span: one GetSpan and one Advance for the whole head instead
        // of a pair per header (ResponseHeadWriteBenchmarks: 80 to 63 ns for the five headers of a minimal-API string result).
        int known = MeasureKnown();
        int length = known + MeasureRest();
        if (length == 0)
        {
            return;
        }

        Span<byte> destination = writer.GetSpan(length);
        int written = WriteKnown(destination, out _);
        writer.Advance(written + WriteRest(destination[written..]));
    }

    /// <summary>The byte count of the known headers, once every value is known to be writable.</summary>
    /// <exception cref="System.InvalidOperationException">As <see cref="CopyTo"/>.</exception>
    internal int MeasureKnown()
    {
        HeaderTable table = _table;
        int length = 0;
        for (ulong bits = _bits; bits != 0; bits &= bits - 1)
        {
            int index = BitOperations.TrailingZeroCount(bits);
            ReadOnlySpan<byte> prefix = table.GetPrefix(index);
            foreach (string? value in _values[index])
            {
                length += prefix.Length + HeaderText.CheckValue(prefix, value);
            }
        }

        return length;
    }

    /// <summary>
    /// Writes the known headers measured by <see cref="MeasureKnown"/>; returns the byte count. <paramref name="singleValued"/>
    /// says whether every one of them holds exactly one value.
    /// </summary>
    internal int WriteKnown(Span<byte> destination, out bool singleValued)
    {
        HeaderTable table = _table;
        int written = 0;
        singleValued = true;
        for (ulong bits = _bits; bits != 0; bits &= bits - 1)
        {
            int index = BitOperations.TrailingZeroCount(bits);
            ReadOnlySpan<byte> prefix = table.GetPrefix(index);
            StringValues values = _values[index];
            singleValued &= values.Count == 1;
            foreach (string? value in values)
            {
                written += HeaderText.WriteHeader(destination[written..], prefix, value);
            }
        }

        return written;
    }

    /// <summary>
    /// True when the known headers present are those of <paramref name="bits"/>, each still holding the string it held when
    /// <see cref="TryKeepKnownValues"/> last succeeded: then they write the bytes they wrote then.
    /// </summary>
    internal bool HasKeptKnownValues(ulong bits) => _bits == bits && (_replacedValues & bits) == 0;

    /// <summary>
    /// Marks the values of the known headers present as kept (see <see cref="HasKeptKnownValues"/>) when each is one string;
    /// false, with nothing marked, when a value is several strings (or a string array, whose element could change) or value
    /// identities cannot be read. One consumer per collection: the connection's <see cref="Http1.Http1ResponseHead"/>.
    /// </summary>
    internal bool TryKeepKnownValues()
    {
        if (!ValueIdentityKnown)
        {
            return false;
        }

        for (ulong bits = _bits; bits != 0; bits &= bits - 1)
        {
            if (ValueObject(ref _values[BitOperations.TrailingZeroCount(bits)]) is not string)
            {
                return false;
            }
        }

        _replacedValues = 0;
        return true;
    }

    /// <summary>The most bytes of Content-Length and the unknown headers, once every one is known to be writable.</summary>
    /// <exception cref="System.InvalidOperationException">As <see cref="CopyTo"/>.</exception>
    internal int MeasureRest()
    {
        int length = _contentLength.HasValue ? HeaderText.MaxContentLengthLine : 0;
        if (_unknown is not null)
        {
            foreach (KeyValuePair<string, StringValues> pair in _unknown)
            {
                foreach (string? value in pair.Value)
                {
                    length += HeaderText.CheckUnknown(pair.Key, value);
                }
            }
        }

        return length;
    }

    /// <summary>
    /// The value of Content-Length when it is all that follows the known headers (no header outside the schema): then the
    /// rest of the head is the Content-Length line alone, the same bytes for the same value.
    /// </summary>
    internal bool TryGetContentLengthAlone(out long length)
    {
        length = _contentLength.GetValueOrDefault();
        return _contentLength.HasValue && _unknown is not { Count: > 0 };
    }

    /// <summary>Writes Content-Length and the unknown headers measured by <see cref="MeasureRest"/>; returns the byte count.</summary>
    internal int WriteRest(Span<byte> destination)
    {
        int written = 0;
        if (_contentLength is long contentLength)
        {
            written += HeaderText.WriteContentLength(destination, contentLength);
        }

        if (_unknown is not null)
        {
            foreach (KeyValuePair<string, StringValues> pair in _unknown)
            {
                foreach (string? value in pair.Value)
                {
                    written += HeaderText.WriteUnknownHeader(destination[written..], pair.Key, value);
                }
            }
        }

        return written;
    }
}
