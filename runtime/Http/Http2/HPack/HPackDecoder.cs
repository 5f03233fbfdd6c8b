using System;
using System.Buffers;
using System.Numerics;
using System.Runtime.CompilerServices;
using System.Threading;

namespace Falconet.Http.Http2.HPack;

/// <summary>
/// Decodes HPACK header blocks (RFC 7541) for one HTTP/2 connection: indexed fields, literals with, without and never
/// indexing, the dynamic table with eviction, dynamic table size updates at the start of a block, Huffman strings.
/// </summary>
/// <remarks>
/// <para>
/// The connection assembles a whole header block (HEADERS and its CONTINUATION frames, within its own bound) and passes
/// it as one contiguous span: a block is never fed in parts, and a block that ends inside a field is a decoding error.
/// Blocks must be decoded in the order they arrive on the connection, every one of them (the dynamic table is shared
/// by all streams), including blocks of streams that are then refused.
/// </para>
/// <para>
/// Fields go to a struct handler the decoder is compiled for: pseudo-headers by <see cref="PseudoHeader"/>, regular
/// fields with the slot of their name in the connection's header set. A static table entry's slot is generated from the
/// schema; a dynamic table entry's slot is resolved once, when the entry is inserted, through
/// <see cref="IHPackHeaderHandler.ResolveSlot"/>; so a repeated request's indexed fields land in their slots with no
/// name compared. One decoder serves one connection, and so one header set.
/// </para>
/// <para>
/// Defences, each a limit with a default: the dynamic table size the connection advertises, the header list size
/// (RFC 9113's accounting of name + value + 32 bytes, counted for every field delivered, so a small block that refers
/// to one large entry many times is refused: the HPACK bomb), and the longest name or value. Nothing is allocated per
/// block in steady state: the table and the scratch buffer for Huffman strings are rented once and kept.
/// </para>
/// </remarks>
internal sealed class HPackDecoder : IDisposable
{
    /// <summary>The default dynamic table size to advertise in SETTINGS_HEADER_TABLE_SIZE: the protocol's initial value.</summary>
    public const int DefaultMaxDynamicTableSize = InitialDynamicTableSize;

    /// <summary>The default limit of a header list (SETTINGS_MAX_HEADER_LIST_SIZE): 32 KiB, as for an HTTP/1.1 header section.</summary>
    public const int DefaultMaxHeaderListSize = 32 * 1024;

    /// <summary>The default limit of one decoded name or value.</summary>
    public const int DefaultMaxStringLength = 16 * 1024;

    /// <summary>SETTINGS_HEADER_TABLE_SIZE before the peer has the connection's settings (RFC 9113 section 6.5.2).</summary>
    public const int InitialDynamicTableSize = 4096;

    /// <summary>The largest dynamic table size the decoder accepts as a limit.</summary>
    public const int MaxDynamicTableSizeLimit = 1024 * 1024;

    // A struct: not readonly, so its methods update this field rather than a copy.
    private HPackDynamicTable _table;
    private readonly int _maxHeaderListSize;
    private readonly int _maxStringLength;
    private readonly int _scratchLimit;
    private const long EntryIdBlock = 1 << 16;
    private static long s_entryIds = EntryIdBlock;

    private byte[] _scratch = [];
    private ulong _nextEntryId;
    private ulong _entryIdLimit;
    private StaticCodes _staticCodes;

    /// <summary>A decoder for one connection.</summary>
    /// <param name="maxDynamicTableSize">What the connection advertises as SETTINGS_HEADER_TABLE_SIZE: the largest size update accepted.</param>
    /// <param name="maxHeaderListSize">The largest header list, in RFC 9113's accounting, that a block may deliver.</param>
    /// <param name="maxStringLength">The longest decoded name or value a block may deliver.</param>
    /// <exception cref="ArgumentOutOfRangeException">A limit is negative, or the table size is above <see cref="MaxDynamicTableSizeLimit"/>.</exception>
    public HPackDecoder(int maxDynamicTableSize = DefaultMaxDynamicTableSize, int maxHeaderListSize = DefaultMaxHeaderListSize, int maxStringLength = DefaultMaxStringLength)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(maxDynamicTableSize);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(maxDynamicTableSize, MaxDynamicTableSizeLimit);
        ArgumentOutOfRangeException.ThrowIfNegative(maxHeaderListSize);
        ArgumentOutOfRangeException.ThrowIfNegative(maxStringLength);
        MaxDynamicTableSize = maxDynamicTableSize;
        _maxHeaderListSize = maxHeaderListSize;
        _maxStringLength = maxStringLength;

        // Until the peer applies the connection's settings its encoder may use the initial 4096 bytes (RFC 7541 4.2).
        int capacity = Math.Max(maxDynamicTableSize, InitialDynamicTableSize);
        _table = new HPackDynamicTable(capacity, InitialDynamicTableSize);

        // A string that fits the table must be decoded to keep the table in step, whatever the string limit.
        _scratchLimit = Math.Max(maxStringLength, capacity);
        HPackStaticTable.RequestSlots.CopyTo(_staticCodes);
    }

    /// <summary>The dynamic table size to advertise in SETTINGS_HEADER_TABLE_SIZE: the largest size update accepted.</summary>
    public int MaxDynamicTableSize { get; }

    /// <summary>The dynamic table's current size in RFC 7541's accounting.</summary>
    public int DynamicTableSize => _table.Size;

    /// <summary>The dynamic table's current maximum size, as the peer's last size update set it.</summary>
    public int DynamicTableMaxSize => _table.MaxSize;

    /// <summary>The number of entries in the dynamic table.</summary>
    public int DynamicTableCount => _table.Count;

    /// <summary>
    /// Decodes one whole header block, handing each field to <paramref name="handler"/>, and updates the dynamic table.
    /// </summary>
    /// <returns>
    /// <see cref="HPackDecodeResult.Success"/>; a stream-level refusal after which the decoder is still in step
    /// (<see cref="HPackDecodeResult.HeaderListTooLarge"/>, <see cref="HPackDecodeResult.MalformedField"/>); or a decoding
    /// error (<see cref="HPackDecodeResults.IsCompressionError"/>): the connection ends with COMPRESSION_ERROR.
    /// </returns>
    public HPackDecodeResult Decode<THandler>(ReadOnlySpan<byte> block, ref THandler handler)
        where THandler : struct, IHPackHeaderHandler
    {
        // The loop's state is never passed by reference, so it stays in registers; the rare paths return what they read.
        int position = 0;
        bool fieldSeen = false;
        long listSize = 0;

        // Once the block is refused no field is delivered, but every one is still decoded: the table must stay in step.
        HPackDecodeResult refusal = HPackDecodeResult.Success;
        while ((uint)position < (uint)block.Length)
        {
            int first = block[position++];
            if (first >= 0x80)
            {
                // Indexed field (RFC 7541 section 6.1).
                int index = first & 0x7F;
                if (index == 0x7F)
                {
                    long read = HPackInteger.Continue(block, position, index);
                    if (read < 0)
                    {
                        return IntegerError(read);
                    }

                    position = (int)(read >> 32);
                    index = (int)read;
                }

                fieldSeen = true;
                if (index > HPackStaticTable.Count)
                {
                    int dynamicIndex = index - HPackStaticTable.Count;
                    if (dynamicIndex > _table.Count)
                    {
                        return HPackDecodeResult.InvalidIndex;
                    }

                    if (refusal == HPackDecodeResult.Success)
                    {
                        ref readonly HPackDynamicTable.Entry entry = ref _table[dynamicIndex];
                        refusal = Deliver(ref handler, entry.Code, _table.GetName(entry), _table.GetValue(entry), entry.ValueMalformed, entry.Id, ref listSize);
                    }
                }
                else if (index != 0)
                {
                    if (refusal == HPackDecodeResult.Success)
                    {
                        ReadOnlySpan<byte> name = HPackStaticTable.GetName(index);
                        refusal = Deliver(ref handler, StaticCode(index, name, ref handler), name, HPackStaticTable.GetValue(index), false, (ulong)index, ref listSize);
                    }
                }
                else
                {
                    return HPackDecodeResult.InvalidIndex;
                }
            }
            else if (first >= 0x40 || first < 0x20)
            {
                // Literal with incremental indexing (6.2.1), without indexing (6.2.2) or never indexed (6.2.3).
                fieldSeen = true;
                bool indexing = first >= 0x40;
                bool deliver = refusal == HPackDecodeResult.Success;
                long read = DecodeLiteral(block, position - 1, indexing, needed: indexing || deliver, ref handler, out Literal literal);
                if (read < 0)
                {
                    return (HPackDecodeResult)(-read);
                }

                position = (int)read;
                if (deliver)
                {
                    refusal = literal.Length != StringLength.Within
                        ? HPackDecodeResult.HeaderListTooLarge
                        : Deliver(ref handler, literal.Code, literal.Name, literal.Value, literal.ValueMalformed, 0, ref listSize);
                }
            }
            else
            {
                // Dynamic table size update (6.3): only before the block's first field, at most what was advertised.
                if (fieldSeen)
                {
                    return HPackDecodeResult.TableSizeUpdateAfterField;
                }

                int size = first & 0x1F;
                if (size == 0x1F)
                {
                    long read = HPackInteger.Continue(block, position, size);
                    if (read < 0)
                    {
                        return IntegerError(read);
                    }

                    position = (int)(read >> 32);
                    size = (int)read;
                }

                if (size > MaxDynamicTableSize)
                {
                    return HPackDecodeResult.TableSizeUpdateTooLarge;
                }

                _table.SetMaxSize(size);
            }
        }

        return refusal;
    }

    /// <summary>Returns the dynamic table and the scratch buffer to their pools.</summary>
    public void Dispose()
    {
        _table.Dispose();
        if (_scratch.Length > 0)
        {
            ArrayPool<byte>.Shared.Return(_scratch);
            _scratch = [];
        }
    }

    // A literal field (its representation's first byte at `position`): its name and value, read, checked and, with
    // incremental indexing, added to the table; the caller delivers it. Returns the position after it, or the negated
    // decoding error. Only a field that is delivered or stored (`needed`) has its name classified.
    private long DecodeLiteral<THandler>(ReadOnlySpan<byte> block, int position, bool indexing, bool needed, ref THandler handler, out Literal literal)
        where THandler : struct, IHPackHeaderHandler
    {
        literal = default;
        HPackInteger.Result indexRead = HPackInteger.TryDecode(block, ref position, indexing ? 6 : 4, out int nameIndex);
        if (indexRead != HPackInteger.Result.Done)
        {
            return -(long)IntegerError(indexRead);
        }

        ReadOnlySpan<byte> name;
        byte code = HPackFieldNames.InvalidName;
        int nameInScratch = 0;
        var length = default(StringLength);
        if (nameIndex == 0)
        {
            HPackDecodeResult read = ReadString(block, ref position, 0, out name, ref length, out _);
            if (read != HPackDecodeResult.Success)
            {
                return -(long)read;
            }

            if (needed && length != StringLength.Lost)
            {
                code = HPackFieldNames.Classify(name, ref handler);
            }

            nameInScratch = name.Overlaps(_scratch) ? name.Length : 0;
        }
        else if (nameIndex <= HPackStaticTable.Count)
        {
            name = HPackStaticTable.GetName(nameIndex);
            if (needed)
            {
                code = StaticCode(nameIndex, name, ref handler);
            }
        }
        else
        {
            int dynamicIndex = nameIndex - HPackStaticTable.Count;
            if (dynamicIndex > _table.Count)
            {
                return -(long)HPackDecodeResult.InvalidIndex;
            }

            ref readonly HPackDynamicTable.Entry entry = ref _table[dynamicIndex];
            code = entry.Code;
            name = _table.GetName(entry);
            if (indexing)
            {
                // Inserting may evict or move the entry this name is in (RFC 7541 section 4.4): keep a copy.
                name.CopyTo(Scratch(0, name.Length));
                nameInScratch = name.Length;
            }
        }

        HPackDecodeResult valueRead = ReadString(block, ref position, nameInScratch, out ReadOnlySpan<byte> value, ref length, out bool fieldValueBytes);
        if (valueRead != HPackDecodeResult.Success)
        {
            return -(long)valueRead;
        }

        if (!needed)
        {
            return position;
        }

        // The scratch buffer may have grown while the value was decoded: the name is where it was copied.
        if (nameInScratch > 0)
        {
            name = _scratch.AsSpan(0, nameInScratch);
        }

        // Checked once per literal: a stored entry keeps the answer for every later reference to it. A Huffman value's
        // bytes were checked as they were decoded: only its ends are left.
        bool valueMalformed = fieldValueBytes ? !HPackFieldNames.HasValidEnds(value) : !HPackFieldNames.IsValidValue(value);
        if (indexing)
        {
            if (length == StringLength.Lost)
            {
                // Longer than the table itself (else it would have been decoded): adding it empties the table (4.4).
                _table.Clear();
            }
            else
            {
                _table.Insert(name, value, code, valueMalformed, NextEntryId());
            }
        }

        literal = new Literal(name, value, code, valueMalformed, length);
        return position;
    }

    // A string literal (RFC 7541 section 5.2): the raw bytes in the block, or Huffman-decoded into the scratch buffer at
    // `offset`. One longer than the string limit is marked TooLong (the block is then refused); one too long to be decoded
    // at all (longer than both the limit and the table, so neither delivered nor stored) is only checked, marked Lost, and
    // comes back empty. `fieldValueBytes`: the string was Huffman-decoded and every byte of it may appear in a field value
    // (false says nothing about raw bytes: they are not looked at here).
    private HPackDecodeResult ReadString(ReadOnlySpan<byte> block, scoped ref int position, int offset, out ReadOnlySpan<byte> text, scoped ref StringLength length, out bool fieldValueBytes)
    {
        text = default;
        fieldValueBytes = false;
        if (position >= block.Length)
        {
            return HPackDecodeResult.Truncated;
        }

        bool huffman = block[position] >= 0x80;
        HPackInteger.Result lengthRead = HPackInteger.TryDecode(block, ref position, 7, out int encodedLength);
        if (lengthRead != HPackInteger.Result.Done)
        {
            return IntegerError(lengthRead);
        }

        if (encodedLength > block.Length - position)
        {
            return HPackDecodeResult.Truncated;
        }

        ReadOnlySpan<byte> raw = block.Slice(position, encodedLength);
        position += encodedLength;
        if (!huffman)
        {
            length = encodedLength > _maxStringLength ? Longest(length, StringLength.TooLong) : length;
            text = raw;
            return HPackDecodeResult.Success;
        }

        // Room for the longest string the input can decode to, so the decoder never checks a write; a second pass covers a
        // string longer than the scratch limit.
        Span<byte> target = Scratch(offset, Math.Min(HuffmanCodec.MaxDecodedLength(encodedLength) + 1, _scratchLimit));
        int decoded = HuffmanCodec.Decode(raw, target, out fieldValueBytes);
        if (decoded < 0)
        {
            return HPackDecodeResult.InvalidHuffman;
        }

        if (decoded > target.Length)
        {
            if (decoded > _scratchLimit)
            {
                length = StringLength.Lost;
                return HPackDecodeResult.Success;
            }

            decoded = HuffmanCodec.Decode(raw, Scratch(offset, decoded), out fieldValueBytes);
        }

        length = decoded > _maxStringLength ? Longest(length, StringLength.TooLong) : length;
        text = _scratch.AsSpan(offset, decoded);
        return HPackDecodeResult.Success;
    }

    private static StringLength Longest(StringLength a, StringLength b) => a > b ? a : b;

    // At least `length` bytes of scratch at `offset`, keeping what is before it (a decoded name while its value is read).
    private Span<byte> Scratch(int offset, int length)
    {
        int needed = offset + length;
        if (needed > _scratch.Length)
        {
            GrowScratch(needed, offset);
        }

        return _scratch.AsSpan(offset, length);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void GrowScratch(int needed, int keep)
    {
        byte[] larger = ArrayPool<byte>.Shared.Rent((int)BitOperations.RoundUpToPowerOf2((uint)Math.Max(needed, 256)));
        _scratch.AsSpan(0, keep).CopyTo(larger);
        if (_scratch.Length > 0)
        {
            ArrayPool<byte>.Shared.Return(_scratch);
        }

        _scratch = larger;
    }

    // Identities of the table's entries: unique in the process (see IHPackHeaderHandler.OnHeader), taken from one counter
    // in blocks, so a decoder touches the shared counter once per 65,536 insertions. Static entries are their index (1 to
    // 61), below the first block.
    private ulong NextEntryId()
    {
        if (_nextEntryId == _entryIdLimit)
        {
            _entryIdLimit = (ulong)Interlocked.Add(ref s_entryIds, EntryIdBlock);
            _nextEntryId = _entryIdLimit - EntryIdBlock;
        }

        return _nextEntryId++;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private byte StaticCode<THandler>(int index, ReadOnlySpan<byte> name, ref THandler handler)
        where THandler : struct, IHPackHeaderHandler
    {
        byte code = _staticCodes[index];
        if (code == HPackFieldNames.Unresolved)
        {
            // A name the default schema lacks (from, link...): the app's set may have it. Asked once per connection.
            int slot = handler.ResolveSlot(name);
            code = (uint)slot <= HeaderTable.ContentLengthIndex ? (byte)slot : HPackFieldNames.UnknownName;
            _staticCodes[index] = code;
        }

        return code;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private HPackDecodeResult Deliver<THandler>(ref THandler handler, byte code, ReadOnlySpan<byte> name, ReadOnlySpan<byte> value, bool valueMalformed, ulong valueId, ref long listSize)
        where THandler : struct, IHPackHeaderHandler
    {
        listSize += name.Length + value.Length + HPackDynamicTable.EntryOverhead;
        if (listSize > _maxHeaderListSize)
        {
            return HPackDecodeResult.HeaderListTooLarge;
        }

        if (valueMalformed)
        {
            return HPackDecodeResult.MalformedField;
        }

        if (code < HPackFieldNames.PseudoHeaderFlag)
        {
            handler.OnHeader(code, name, value, valueId);
        }
        else if (code == HPackFieldNames.UnknownName)
        {
            handler.OnHeader(-1, name, value, valueId);
        }
        else if (code == HPackFieldNames.InvalidName || code == HPackFieldNames.PseudoHeaderFlag)
        {
            return HPackDecodeResult.MalformedField;
        }
        else
        {
            handler.OnPseudoHeader((PseudoHeader)(code & ~HPackFieldNames.PseudoHeaderFlag), value);
        }

        return HPackDecodeResult.Success;
    }

    private static HPackDecodeResult IntegerError(HPackInteger.Result result) =>
        result == HPackInteger.Result.Truncated ? HPackDecodeResult.Truncated : HPackDecodeResult.IntegerOverflow;

    private static HPackDecodeResult IntegerError(long continued) =>
        continued == HPackInteger.TruncatedResult ? HPackDecodeResult.Truncated : HPackDecodeResult.IntegerOverflow;

    /// <summary>A literal field as read, for the caller to deliver: spans into the block, the scratch buffer or the table.</summary>
    private readonly ref struct Literal(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value, byte code, bool valueMalformed, StringLength length)
    {
        public readonly ReadOnlySpan<byte> Name = name;
        public readonly ReadOnlySpan<byte> Value = value;
        public readonly byte Code = code;
        public readonly bool ValueMalformed = valueMalformed;
        public readonly StringLength Length = length;
    }

    /// <summary>How a literal's strings compare with the limits: within them, too long to deliver, or too long even to decode.</summary>
    private enum StringLength : byte
    {
        Within,
        TooLong,
        Lost,
    }

    /// <summary>The field code of each static entry for this connection: the generated slot, or the set's answer once asked.</summary>
    [InlineArray(HPackStaticTable.Count + 1)]
    private struct StaticCodes
    {
        private byte _element;
    }
}
