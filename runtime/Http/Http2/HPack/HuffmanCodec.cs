using System;
using System.Buffers.Binary;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace Falconet.Http.Http2.HPack;

/// <summary>
/// The HPACK Huffman code (RFC 7541 section 5.2, Appendix B) over the generated tables of <see cref="HPackHuffman"/>: decoding
/// looks up <see cref="HPackHuffman.PeekBits"/> bits at a time (two symbols per lookup when both fit), encoding packs codes
/// into a 64-bit accumulator.
/// </summary>
internal static class HuffmanCodec
{
    /// <summary>What <see cref="Decode(ReadOnlySpan{byte}, Span{byte})"/> returns for input that is not a valid Huffman string.</summary>
    public const int Invalid = -1;

    private const int WindowShift = 64 - HPackHuffman.PeekBits;

    /// <summary>
    /// Decodes <paramref name="source"/> into <paramref name="destination"/> and returns the decoded length, or
    /// <see cref="Invalid"/> when the input holds EOS, ends inside a code with more than 7 bits, or pads with anything but
    /// ones (RFC 7541 section 5.2). A decoded string longer than <paramref name="destination"/> is still checked to the
    /// end: its full length is returned and only the first <c>destination.Length</c> bytes are written.
    /// </summary>
    public static int Decode(ReadOnlySpan<byte> source, Span<byte> destination) => Decode(source, destination, out _);

    /// <summary>
    /// Decodes like <see cref="Decode(ReadOnlySpan{byte}, Span{byte})"/>, and says whether every decoded byte may appear in
    /// a field value (<see cref="Falconet.Text.HttpCharacters.IsFieldValueChar"/>), so a decoded value is not walked again to check it.
    /// </summary>
    /// <remarks>
    /// Every byte a field value may not hold (the controls but HTAB, and DEL) has a code longer than a window, so only the
    /// bit-by-bit path looks at it: the windows' symbols are all field-value bytes, which a test of the generated table
    /// holds.
    /// </remarks>
    public static int Decode(ReadOnlySpan<byte> source, Span<byte> destination, out bool fieldValueBytes) =>
        destination.Length > MaxDecodedLength(source.Length)
            ? Decode<RoomForAll>(source, destination, out fieldValueBytes)
            : Decode<Bounded>(source, destination, out fieldValueBytes);

    /// <summary>
    /// The longest string <paramref name="encodedLength"/> bytes can decode to: every code has at least 5 bits. A destination
    /// one byte longer than this is never checked while decoding (the decoder writes two bytes at a time).
    /// </summary>
    public static int MaxDecodedLength(int encodedLength) => (int)((long)encodedLength * 8 / 5);

    // TRoom says whether the destination may be too short, and so whether every write is checked against its length: the
    // JIT compiles one loop for each.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static int Decode<TRoom>(ReadOnlySpan<byte> source, Span<byte> destination, out bool fieldValueBytes)
        where TRoom : struct, IRoom
    {
        // Every local stays in a register: nothing here is passed by reference, the rare paths included.
        ref uint windows = ref MemoryMarshal.GetReference(HPackHuffman.DecodeWindows);
        ref byte input = ref MemoryMarshal.GetReference(source);
        ref byte output = ref MemoryMarshal.GetReference(destination);
        nuint length = (nuint)source.Length;
        nuint position = 0;
        nint capacity = destination.Length;
        nint written = 0;

        // The next bits of input, the first at the top; `bits` of them are valid. Below them the accumulator may hold
        // bits of bytes not yet counted (an 8-byte load takes more than it counts): the same bits a later load puts there.
        ulong accumulator = 0;
        int bits = 0;

        // Written on the bit-by-bit path only: a local for it would cost the loop a register.
        fieldValueBytes = true;
        while (true)
        {
            if (length - position >= sizeof(ulong))
            {
                ulong next = Unsafe.ReadUnaligned<ulong>(ref Unsafe.Add(ref input, position));
                accumulator |= (BitConverter.IsLittleEndian ? BinaryPrimitives.ReverseEndianness(next) : next) >> bits;
                position += (nuint)((63 - bits) >> 3);
                bits |= 56;
            }
            else
            {
                while (bits <= 56 && position < length)
                {
                    accumulator |= (ulong)Unsafe.Add(ref input, position++) << (56 - bits);
                    bits += 8;
                }

                if (bits < HPackHuffman.PeekBits)
                {
                    return DecodeTail(accumulator, bits, ref output, (int)capacity, (int)written, ref windows);
                }
            }

            // At least 12 valid bits; after a full refill at least 56, so four windows without a look at the input.
            do
            {
                uint entry = Unsafe.Add(ref windows, (nint)(accumulator >> WindowShift));
                int count = (int)(entry >> HPackHuffman.CountShift) & 3;
                if ((uint)(count - 1) >= 2)
                {
                    if (count == 3)
                    {
                        return Invalid;
                    }

                    // A code longer than the window: the rest of it bit by bit down the tree (rare: no ASCII letter or digit).
                    accumulator <<= HPackHuffman.PeekBits;
                    bits -= HPackHuffman.PeekBits;
                    int node = (int)(entry >> HPackHuffman.NodeShift) & 0xFFFF;
                    int child;
                    while (true)
                    {
                        if (bits == 0)
                        {
                            if (position == length)
                            {
                                // More than 7 bits of a code at the end: too long to be padding.
                                return Invalid;
                            }

                            // Whole bytes from here: the bits below the valid ones are zeros or this same input.
                            accumulator |= (ulong)Unsafe.Add(ref input, position++) << 56;
                            bits = 8;
                        }

                        child = Unsafe.Add(ref MemoryMarshal.GetReference(HPackHuffman.LongCodeTree), (nint)((node * 2) + (int)(accumulator >> 63)));
                        accumulator <<= 1;
                        bits--;
                        if ((child & HPackHuffman.LeafFlag) != 0)
                        {
                            break;
                        }

                        node = child;
                    }

                    int symbol = child & 0x1FF;
                    if (symbol == HPackHuffman.EndOfString)
                    {
                        return Invalid;
                    }

                    // Not HttpCharacters.IsFieldValueChar: its table is a static the loop would have to make sure of.
                    if ((symbol < 0x20 && symbol != '\t') || symbol == 0x7F)
                    {
                        fieldValueBytes = false;
                    }

                    if (!TRoom.MayBeShort || written < capacity)
                    {
                        Unsafe.Add(ref output, written) = (byte)symbol;
                    }

                    written++;
                    continue;
                }

                if ((!TRoom.MayBeShort || written + 1 < capacity) && BitConverter.IsLittleEndian)
                {
                    // Both symbol bytes at once; the second is overwritten next when the entry holds one symbol.
                    Unsafe.WriteUnaligned(ref Unsafe.Add(ref output, written), (ushort)(entry >> HPackHuffman.FirstShift));
                }
                else
                {
                    WriteSymbols(ref output, (int)capacity, (int)written, entry, count);
                }

                written += count;

                // The bits consumed are the entry's low six bits: a 64-bit shift uses only those. Its low byte is the same
                // number (bits 6 and 7 are always clear): taken that way, the count is not masked before the shift, which is
                // on the loop's critical path (load the entry, shift the bit buffer, look up the next window).
                accumulator <<= (int)entry;
                bits -= (byte)entry;
            }
            while (bits >= HPackHuffman.PeekBits);
        }
    }

    /// <summary>The number of bytes <paramref name="value"/> takes Huffman-encoded (its chars are octets, U+0000 to U+00FF).</summary>
    public static int GetEncodedLength(ReadOnlySpan<char> value)
    {
        ref ulong codes = ref MemoryMarshal.GetReference(HPackHuffman.Codes);
        long bits = 0;
        foreach (char c in value)
        {
            bits += (int)Unsafe.Add(ref codes, (nint)(byte)c) & 0xFF;
        }

        return (int)((bits + 7) >> 3);
    }

    /// <summary>The number of bytes <paramref name="value"/> takes Huffman-encoded.</summary>
    public static int GetEncodedLength(ReadOnlySpan<byte> value)
    {
        ref ulong codes = ref MemoryMarshal.GetReference(HPackHuffman.Codes);
        long bits = 0;
        foreach (byte b in value)
        {
            bits += (int)Unsafe.Add(ref codes, (nint)b) & 0xFF;
        }

        return (int)((bits + 7) >> 3);
    }

    /// <summary>
    /// Huffman-encodes <paramref name="value"/> (chars U+0000 to U+00FF) into <paramref name="destination"/>, which holds at
    /// least <see cref="GetEncodedLength(ReadOnlySpan{char})"/> bytes, padding the last byte with ones; returns the length.
    /// </summary>
    public static int Encode(ReadOnlySpan<char> value, Span<byte> destination)
    {
        ref ulong codes = ref MemoryMarshal.GetReference(HPackHuffman.Codes);
        ulong pending = 0;
        int pendingBits = 0;
        int written = 0;
        foreach (char c in value)
        {
            ulong code = Unsafe.Add(ref codes, (nint)(byte)c);
            int length = (int)code & 0xFF;
            pending = (pending << length) | (code >> 8);
            pendingBits += length;
            while (pendingBits >= 8)
            {
                pendingBits -= 8;
                destination[written++] = (byte)(pending >> pendingBits);
            }
        }

        if (pendingBits > 0)
        {
            // The padding is the leading bits of EOS: ones.
            destination[written++] = (byte)((pending << (8 - pendingBits)) | (0xFFu >> pendingBits));
        }

        return written;
    }

    /// <summary>Huffman-encodes <paramref name="value"/> like <see cref="Encode(ReadOnlySpan{char}, Span{byte})"/>.</summary>
    public static int Encode(ReadOnlySpan<byte> value, Span<byte> destination)
    {
        ref ulong codes = ref MemoryMarshal.GetReference(HPackHuffman.Codes);
        ulong pending = 0;
        int pendingBits = 0;
        int written = 0;
        foreach (byte b in value)
        {
            ulong code = Unsafe.Add(ref codes, (nint)b);
            int length = (int)code & 0xFF;
            pending = (pending << length) | (code >> 8);
            pendingBits += length;
            while (pendingBits >= 8)
            {
                pendingBits -= 8;
                destination[written++] = (byte)(pending >> pendingBits);
            }
        }

        if (pendingBits > 0)
        {
            destination[written++] = (byte)((pending << (8 - pendingBits)) | (0xFFu >> pendingBits));
        }

        return written;
    }

    // The last bits of the input, fewer than a window: whole symbols while they fit, then at most 7 bits of ones.
    private static int DecodeTail(ulong accumulator, int bits, ref byte output, int capacity, int written, ref uint windows)
    {
        while (bits > 0)
        {
            // The bits below the valid ones are zeros here: every byte of input has been counted.
            uint entry = Unsafe.Add(ref windows, (nint)(accumulator >> WindowShift));
            int count = (int)(entry >> HPackHuffman.CountShift) & 3;
            int firstBits = (int)(entry >> HPackHuffman.FirstBitsShift) & 0xF;
            if (count == 0 || firstBits > bits)
            {
                // The valid bits start a code they do not finish: padding, which is at most 7 bits of ones.
                return bits <= 7 && accumulator >> (64 - bits) == (1UL << bits) - 1 ? written : Invalid;
            }

            if (count == 3)
            {
                return Invalid;
            }

            WriteSymbols(ref output, capacity, written, entry, 1);
            written++;
            accumulator <<= firstBits;
            bits -= firstBits;
        }

        return written;
    }

    // Inlined: a call in the decoding loop would make the JIT keep the bit buffer and the entry on the stack.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void WriteSymbols(ref byte output, int capacity, int written, uint entry, int count)
    {
        if (written < capacity)
        {
            Unsafe.Add(ref output, written) = (byte)(entry >> HPackHuffman.FirstShift);
        }

        if (count == 2 && written + 1 < capacity)
        {
            Unsafe.Add(ref output, written + 1) = (byte)(entry >> HPackHuffman.SecondShift);
        }
    }

    /// <summary>Whether a decoding loop must check its writes against the destination's length.</summary>
    private interface IRoom
    {
        static abstract bool MayBeShort { get; }
    }

    /// <summary>A destination longer than the longest string the input can decode to.</summary>
    private struct RoomForAll : IRoom
    {
        public static bool MayBeShort => false;
    }

    /// <summary>A destination that may be too short: writes past it are counted, not made.</summary>
    private struct Bounded : IRoom
    {
        public static bool MayBeShort => true;
    }
}
