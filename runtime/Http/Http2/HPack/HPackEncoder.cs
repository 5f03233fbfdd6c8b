using System;
using System.Buffers;
using System.Buffers.Text;
using System.Collections.Generic;
using System.Numerics;
using System.Runtime.CompilerServices;
using System.Text;
using Microsoft.Extensions.Primitives;

namespace Falconet.Http.Http2.HPack;

/// <summary>
/// Encodes response header blocks (RFC 7541) for one HTTP/2 connection: <c>:status</c> and every header of a
/// <see cref="ResponseHeaderCollection"/>, through the static table, a dynamic table of the values the connection
/// repeats, and Huffman strings where they are shorter.
/// </summary>
/// <remarks>
/// <para>
/// Blocks must reach the peer in the order they are encoded (the dynamic table is the peer decoder's too): encode a
/// stream's block just before its HEADERS frame is queued, and never drop an encoded block. The output layer splits a
/// block into HEADERS and CONTINUATION frames by the peer's SETTINGS_MAX_FRAME_SIZE.
/// </para>
/// <para>
/// What is indexed: a header's value is sent as a literal the first time and added to the dynamic table when it is
/// sent again while among the last four literals of its header (so Server, Date within its second, the few
/// Content-Types of a page and other repeated values become one byte, while values unique to a response, such as ETag
/// or Location, never displace them); <c>set-cookie</c>,
/// <c>authorization</c> and <c>proxy-authorization</c> are never indexed (RFC 7541 section 7.1.3: a peer's
/// intermediaries must not index them either); Content-Length and headers outside the header set are literals
/// without indexing, names from the static table where it has them. The table is bounded by the peer's
/// SETTINGS_HEADER_TABLE_SIZE and this encoder's own maximum; a change is signalled at the start of the next block.
/// </para>
/// <para>Values are checked as the HTTP/1.1 writer checks them and trimmed of edge whitespace, which HTTP/2 forbids.
/// Nothing is allocated per block: the table holds references to the collection's value strings.</para>
/// </remarks>
internal sealed class HPackEncoder
{
    /// <summary>The default cap on the dynamic table: the protocol's initial SETTINGS_HEADER_TABLE_SIZE.</summary>
    public const int DefaultMaxDynamicTableSize = 4096;

    /// <summary>The peer decoder's table size until its SETTINGS say otherwise (RFC 9113 section 6.5.2).</summary>
    public const int InitialPeerTableSize = 4096;

    // The most a field can add to its name and value lengths: a type byte with a 4-bit index (up to 5 more bytes), and
    // two 7-bit string lengths (up to 5 bytes each).
    private const int FieldOverhead = 16;

    // Two size updates (the smallest since the last block, then the current one) and a literal :status.
    private const int BlockOverhead = 12 + 8;

    // "content-length" and up to 19 digits.
    private const int ContentLengthField = 32;

    // How many literal values of each header are remembered: a value among them is indexed when it is sent again.
    private const int RecentPerSlot = 4;

    private readonly int _cap;
    private readonly bool _huffman;
    private int _maxSize;
    private int _smallestSinceBlock;
    private bool _sizeUpdatePending;
    private int _size;
    private Entry[] _entries = [];
    private int _mask;

    // Entries are numbered as inserted; [_evicted, _inserted) are in the table, the newest at HPACK index 62.
    private long _inserted;
    private long _evicted;
    private SlotEntries _newestBySlot;
    private RecentLiterals _recentLiterals;
    private SlotCursors _recentCursors;
    private HeaderTable? _policyTable;
    private ulong _neverIndexed;

    /// <summary>An encoder for one connection.</summary>
    /// <param name="maxDynamicTableSize">The most this encoder's dynamic table holds, whatever the peer allows; 0 disables it.</param>
    /// <param name="huffman">Whether strings are Huffman-coded when that is shorter.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxDynamicTableSize"/> is negative or above 1 MiB.</exception>
    public HPackEncoder(int maxDynamicTableSize = DefaultMaxDynamicTableSize, bool huffman = true)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(maxDynamicTableSize);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(maxDynamicTableSize, HPackDecoder.MaxDynamicTableSizeLimit);
        _cap = maxDynamicTableSize;
        _huffman = huffman;
        _maxSize = Math.Min(maxDynamicTableSize, InitialPeerTableSize);
        _smallestSinceBlock = _maxSize;

        // The peer's decoder starts at 4096: a smaller table is signalled in the first block.
        _sizeUpdatePending = _maxSize != InitialPeerTableSize;
    }

    /// <summary>The size of the dynamic table in RFC 7541's accounting.</summary>
    public int DynamicTableSize => _size;

    /// <summary>The maximum size of the dynamic table in force: the smaller of the peer's setting and this encoder's cap.</summary>
    public int DynamicTableMaxSize => _maxSize;

    /// <summary>The number of entries in the dynamic table.</summary>
    public int DynamicTableCount => (int)(_inserted - _evicted);

    /// <summary>
    /// Applies the peer's SETTINGS_HEADER_TABLE_SIZE: the table shrinks at once if it must, and the next block starts
    /// with the size update(s) that tell the peer (RFC 7541 section 4.2).
    /// </summary>
    public void SetPeerMaxTableSize(int size)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(size);
        int maxSize = Math.Min(size, _cap);
        if (maxSize == _maxSize)
        {
            return;
        }

        _maxSize = maxSize;
        _smallestSinceBlock = Math.Min(_smallestSinceBlock, maxSize);
        _sizeUpdatePending = true;
        EvictTo(maxSize);
    }

    /// <summary>
    /// The most bytes the block of <paramref name="headers"/> can take, with a <c>:status</c> or without (trailers).
    /// </summary>
    /// <exception cref="InvalidOperationException">A value holds a character that cannot be written, or an unknown name is not a token.</exception>
    public static int GetMaxEncodedLength(ResponseHeaderCollection headers)
    {
        ArgumentNullException.ThrowIfNull(headers);
        HeaderTable table = headers.KnownHeaderTable;
        long length = BlockOverhead;
        for (ulong bits = headers.PresentBits; bits != 0; bits &= bits - 1)
        {
            int index = BitOperations.TrailingZeroCount(bits);
            ReadOnlySpan<byte> prefix = table.GetPrefix(index);
            foreach (string? value in headers.KnownValue(index))
            {
                length += FieldOverhead + prefix.Length + HeaderText.CheckValue(prefix, value);
            }
        }

        if (headers.ContentLength.HasValue)
        {
            length += ContentLengthField;
        }

        if (headers.UnknownHeaders is { } unknown)
        {
            foreach (KeyValuePair<string, StringValues> pair in unknown)
            {
                foreach (string? value in pair.Value)
                {
                    length += FieldOverhead + HeaderText.CheckUnknown(pair.Key, value);
                }
            }
        }

        return length > int.MaxValue ? throw new InvalidOperationException("The response headers are too large to encode.") : (int)length;
    }

    /// <summary>
    /// Encodes the response head (<paramref name="statusCode"/> and <paramref name="headers"/>) into
    /// <paramref name="destination"/>. False, with nothing changed, when the destination is smaller than
    /// <see cref="GetMaxEncodedLength"/>.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">The status is not a three-digit code.</exception>
    /// <exception cref="InvalidOperationException">A value holds a character that cannot be written, or an unknown name is not a token.</exception>
    public bool TryEncodeResponseHeaders(int statusCode, ResponseHeaderCollection headers, Span<byte> destination, out int written)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(statusCode, 100);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(statusCode, 999);
        return TryEncode(statusCode, headers, destination, out written);
    }

    /// <summary>Encodes a trailer block (no pseudo-header) like <see cref="TryEncodeResponseHeaders"/>.</summary>
    /// <exception cref="InvalidOperationException">A value holds a character that cannot be written, or an unknown name is not a token.</exception>
    public bool TryEncodeTrailers(ResponseHeaderCollection trailers, Span<byte> destination, out int written) =>
        TryEncode(0, trailers, destination, out written);

    /// <summary>Encodes the response head into <paramref name="writer"/> (one span of the bound, then one advance).</summary>
    public void WriteResponseHeaders<TWriter>(ref TWriter writer, int statusCode, ResponseHeaderCollection headers)
        where TWriter : IBufferWriter<byte>
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(statusCode, 100);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(statusCode, 999);
        Span<byte> destination = writer.GetSpan(GetMaxEncodedLength(headers));
        writer.Advance(EncodeBlock(statusCode, headers, destination));
    }

    /// <summary>Encodes a trailer block into <paramref name="writer"/>.</summary>
    public void WriteTrailers<TWriter>(ref TWriter writer, ResponseHeaderCollection trailers)
        where TWriter : IBufferWriter<byte>
    {
        Span<byte> destination = writer.GetSpan(GetMaxEncodedLength(trailers));
        writer.Advance(EncodeBlock(0, trailers, destination));
    }

    private bool TryEncode(int statusCode, ResponseHeaderCollection headers, Span<byte> destination, out int written)
    {
        if (destination.Length < GetMaxEncodedLength(headers))
        {
            written = 0;
            return false;
        }

        written = EncodeBlock(statusCode, headers, destination);
        return true;
    }

    // The block; the caller has checked the values and that the destination holds GetMaxEncodedLength.
    private int EncodeBlock(int statusCode, ResponseHeaderCollection headers, Span<byte> destination)
    {
        int written = 0;
        if (_sizeUpdatePending)
        {
            // A table that shrank and grew again since the last block is signalled at its smallest first (section 4.2).
            if (_smallestSinceBlock < _maxSize)
            {
                written += HPackInteger.Encode(_smallestSinceBlock, 5, 0x20, destination);
            }

            written += HPackInteger.Encode(_maxSize, 5, 0x20, destination[written..]);
            _sizeUpdatePending = false;
            _smallestSinceBlock = _maxSize;
        }

        if (statusCode != 0)
        {
            written += EncodeStatus(statusCode, destination[written..]);
        }

        HeaderTable table = headers.KnownHeaderTable;
        if (!ReferenceEquals(table, _policyTable))
        {
            SetPolicy(table);
        }

        for (ulong bits = headers.PresentBits; bits != 0; bits &= bits - 1)
        {
            int slot = BitOperations.TrailingZeroCount(bits);
            foreach (string? value in headers.KnownValue(slot))
            {
                written += EncodeKnown(slot, table, value ?? string.Empty, destination[written..]);
            }
        }

        if (headers.ContentLength is long contentLength)
        {
            written += EncodeContentLength(contentLength, destination[written..]);
        }

        if (headers.UnknownHeaders is { Count: > 0 } unknown)
        {
            foreach (KeyValuePair<string, StringValues> pair in unknown)
            {
                foreach (string? value in pair.Value)
                {
                    written += EncodeUnknown(pair.Key, value ?? string.Empty, destination[written..]);
                }
            }
        }

        return written;
    }

    private static int EncodeStatus(int statusCode, Span<byte> destination)
    {
        int index = HPackStaticTable.GetStatusIndex(statusCode);
        if (index != 0)
        {
            return HPackInteger.Encode(index, 7, 0x80, destination);
        }

        // A literal without indexing, the name ":status" from the static table, three raw digits (Huffman saves nothing).
        int written = HPackInteger.Encode(HPackStaticTable.StatusNameIndex, 4, 0x00, destination);
        destination[written++] = 3;
        destination[written++] = (byte)('0' + (statusCode / 100));
        destination[written++] = (byte)('0' + (statusCode / 10 % 10));
        destination[written++] = (byte)('0' + (statusCode % 10));
        return written;
    }

    private int EncodeKnown(int slot, HeaderTable table, string value, Span<byte> destination)
    {
        ReadOnlySpan<char> text = Trim(value);
        bool whole = text.Length == value.Length;
        if (whole)
        {
            int index = FindEntry(slot, value);
            if (index == 0 && (uint)slot < (uint)HPackStaticTable.ResponseNameIndexes.Length)
            {
                index = HPackStaticTable.GetResponseFieldIndex(slot, value);
            }

            if (index != 0)
            {
                return HPackInteger.Encode(index, 7, 0x80, destination);
            }
        }

        // The name: the static table's entry, else a dynamic entry of the same header, else the name itself.
        int nameIndex = (uint)slot < (uint)HPackStaticTable.ResponseNameIndexes.Length ? HPackStaticTable.ResponseNameIndexes[slot] : 0;
        if (nameIndex == 0)
        {
            nameIndex = NewestEntryIndex(slot);
        }

        int written;
        bool insert = false;
        if ((_neverIndexed & (1UL << slot)) != 0)
        {
            written = HPackInteger.Encode(nameIndex, 4, 0x10, destination);
        }
        else if (whole && _maxSize > 0 && SeenBefore(slot, value))
        {
            written = HPackInteger.Encode(nameIndex, 6, 0x40, destination);
            insert = true;
        }
        else
        {
            written = HPackInteger.Encode(nameIndex, 4, 0x00, destination);
            Remember(slot, value);
        }

        ReadOnlySpan<byte> name = table.GetLowerCaseName(slot);
        if (nameIndex == 0)
        {
            written += WriteString(name, destination[written..]);
        }

        written += WriteString(text, destination[written..]);
        if (insert)
        {
            // After the representation is written: its name index refers to the table before the insertion.
            Insert(slot, value, name.Length + value.Length + HPackDynamicTable.EntryOverhead);
        }

        return written;
    }

    private int EncodeContentLength(long contentLength, Span<byte> destination)
    {
        int written = HPackInteger.Encode(HPackStaticTable.ContentLengthIndex, 4, 0x00, destination);
        Span<byte> digits = stackalloc byte[20];
        Utf8Formatter.TryFormat(contentLength, digits, out int length);
        return written + WriteString(digits[..length], destination[written..]);
    }

    private int EncodeUnknown(string name, string value, Span<byte> destination)
    {
        // HTTP/2 names are lower case (RFC 9113 section 8.2.1); an app may have set any case.
        byte[]? rented = null;
        Span<byte> lower = name.Length <= 256 ? stackalloc byte[name.Length] : (rented = ArrayPool<byte>.Shared.Rent(name.Length)).AsSpan(0, name.Length);
        for (int i = 0; i < name.Length; i++)
        {
            char c = name[i];
            lower[i] = (byte)(c is >= 'A' and <= 'Z' ? c + ('a' - 'A') : c);
        }

        // A literal without indexing (or never indexed), its name a literal too: index 0.
        destination[0] = IsNeverIndexed(lower) ? (byte)0x10 : (byte)0x00;
        int written = 1;
        written += WriteString(lower, destination[written..]);
        written += WriteString(Trim(value), destination[written..]);
        if (rented is not null)
        {
            ArrayPool<byte>.Shared.Return(rented);
        }

        return written;
    }

    // A string literal (RFC 7541 section 5.2): Huffman-coded when that is shorter.
    private int WriteString(ReadOnlySpan<char> text, Span<byte> destination)
    {
        if (_huffman)
        {
            int encoded = HuffmanCodec.GetEncodedLength(text);
            if (encoded < text.Length)
            {
                int written = HPackInteger.Encode(encoded, 7, 0x80, destination);
                return written + HuffmanCodec.Encode(text, destination[written..]);
            }
        }

        int lengthBytes = HPackInteger.Encode(text.Length, 7, 0x00, destination);
        return lengthBytes + Encoding.Latin1.GetBytes(text, destination[lengthBytes..]);
    }

    private int WriteString(ReadOnlySpan<byte> text, Span<byte> destination)
    {
        if (_huffman)
        {
            int encoded = HuffmanCodec.GetEncodedLength(text);
            if (encoded < text.Length)
            {
                int written = HPackInteger.Encode(encoded, 7, 0x80, destination);
                return written + HuffmanCodec.Encode(text, destination[written..]);
            }
        }

        int lengthBytes = HPackInteger.Encode(text.Length, 7, 0x00, destination);
        text.CopyTo(destination[lengthBytes..]);
        return lengthBytes + text.Length;
    }

    // The HPACK index of the entry holding exactly this header and value, or 0: the header's entries, newest first.
    private int FindEntry(int slot, string value)
    {
        for (long number = _newestBySlot[slot] - 1; number >= _evicted; number = _entries[(int)(number & _mask)].Previous - 1)
        {
            string entryValue = _entries[(int)(number & _mask)].Value!;
            if (ReferenceEquals(entryValue, value) || string.Equals(entryValue, value, StringComparison.Ordinal))
            {
                return IndexOf(number);
            }
        }

        return 0;
    }

    private int NewestEntryIndex(int slot)
    {
        long number = _newestBySlot[slot] - 1;
        return number >= _evicted ? IndexOf(number) : 0;
    }

    private int IndexOf(long number) => HPackStaticTable.Count + (int)(_inserted - number);

    // Whether the value is among the last literals of its header: by reference first (constant and shared strings),
    // then by content.
    private bool SeenBefore(int slot, string value)
    {
        int start = slot * RecentPerSlot;
        for (int i = start; i < start + RecentPerSlot; i++)
        {
            if (ReferenceEquals(_recentLiterals[i], value))
            {
                return true;
            }
        }

        for (int i = start; i < start + RecentPerSlot; i++)
        {
            if (string.Equals(_recentLiterals[i], value, StringComparison.Ordinal))
            {
                return true;
            }
        }

        return false;
    }

    private void Remember(int slot, string value)
    {
        int cursor = _recentCursors[slot];
        _recentLiterals[(slot * RecentPerSlot) + cursor] = value;
        _recentCursors[slot] = (byte)((cursor + 1) % RecentPerSlot);
    }

    private void Insert(int slot, string value, int size)
    {
        if (size > _maxSize)
        {
            // Larger than the table: adding it empties the table and adds nothing (RFC 7541 section 4.4), on both ends.
            EvictTo(0);
            return;
        }

        EvictTo(_maxSize - size);
        if (_entries.Length == 0)
        {
            int count = (int)BitOperations.RoundUpToPowerOf2((uint)Math.Max(1, _cap / HPackDynamicTable.EntryOverhead));
            _entries = new Entry[count];
            _mask = count - 1;
        }

        long number = _inserted++;
        _entries[(int)(number & _mask)] = new Entry(slot, value, size, _newestBySlot[slot]);
        _newestBySlot[slot] = number + 1;
        _size += size;
    }

    private void EvictTo(int size)
    {
        while (_size > size)
        {
            ref Entry oldest = ref _entries[(int)(_evicted & _mask)];
            _size -= oldest.Size;
            if (_newestBySlot[oldest.Slot] == _evicted + 1)
            {
                _newestBySlot[oldest.Slot] = 0;
            }

            oldest = default;
            _evicted++;
        }
    }

    private void SetPolicy(HeaderTable table)
    {
        ulong never = 0;
        for (int i = 0; i < table.Count; i++)
        {
            if (IsNeverIndexed(table.GetLowerCaseName(i)))
            {
                never |= 1UL << i;
            }
        }

        _neverIndexed = never;
        _policyTable = table;
    }

    // Fields whose values are secrets a compression side channel could probe: set-cookie in responses, and for
    // completeness the credentials of requests (RFC 7541 section 7.1.3).
    private static bool IsNeverIndexed(ReadOnlySpan<byte> lowerCaseName) =>
        lowerCaseName.SequenceEqual("set-cookie"u8) || lowerCaseName.SequenceEqual("authorization"u8) || lowerCaseName.SequenceEqual("proxy-authorization"u8);

    private static ReadOnlySpan<char> Trim(string value) => value.AsSpan().Trim(" \t");

    /// <summary>
    /// An entry of the encoder's table: the header's slot, the value string (a reference to the collection's, so no
    /// bytes are kept), its size, and the number (plus one) of the previous entry of the same slot, 0 for none.
    /// </summary>
    private struct Entry(int slot, string value, int size, long previous)
    {
        public readonly int Slot = slot;
        public readonly string? Value = value;
        public readonly int Size = size;
        public readonly long Previous = previous;
    }

    [InlineArray(HeaderTable.MaxKnownHeaders)]
    private struct SlotEntries
    {
        private long _element;
    }

    [InlineArray(HeaderTable.MaxKnownHeaders * RecentPerSlot)]
    private struct RecentLiterals
    {
        private string? _element;
    }

    [InlineArray(HeaderTable.MaxKnownHeaders)]
    private struct SlotCursors
    {
        private byte _element;
    }
}
