using System;
using System.Buffers;
using System.Numerics;

namespace Falconet.Http.Http2.HPack;

/// <summary>
/// The decoder's dynamic table (RFC 7541 section 2.3.2): entries newest first, evicted oldest first to stay within the
/// maximum size (name + value + 32 per entry). Each entry keeps the field code its name resolved to on insertion.
/// </summary>
/// <remarks>
/// Entry bytes are appended to one buffer of twice the largest table size, never wrapped, so each entry is one span;
/// when the end is reached the live bytes (at most one table size) move to the front, at most once per table size of
/// bytes inserted. Buffer and entry ring are rented from the shared array pools on the first insert and returned by
/// <see cref="Dispose"/>: an idle connection with an empty table holds neither.
/// </remarks>
internal sealed class HPackDynamicTable : IDisposable
{
    /// <summary>What RFC 7541 section 4.1 adds to the length of name and value for the size of an entry.</summary>
    public const int EntryOverhead = 32;

    private readonly int _capacity;
    private byte[] _bytes = [];
    private Entry[] _entries = [];
    private int _mask;
    private int _newest = -1;
    private int _count;
    private int _size;
    private int _maxSize;
    private int _end;

    /// <summary>A table whose maximum size can be set up to <paramref name="capacity"/>, starting at <paramref name="maxSize"/>.</summary>
    public HPackDynamicTable(int capacity, int maxSize)
    {
        _capacity = capacity;
        _maxSize = maxSize;
    }

    /// <summary>The number of entries.</summary>
    public int Count => _count;

    /// <summary>The size of the table in RFC 7541's accounting.</summary>
    public int Size => _size;

    /// <summary>The current maximum size, as the last size update set it.</summary>
    public int MaxSize => _maxSize;

    /// <summary>The largest maximum size the table can take.</summary>
    public int Capacity => _capacity;

    /// <summary>The entry at a dynamic index: 1 is the newest. The caller has checked <paramref name="index"/> against <see cref="Count"/>.</summary>
    public ref readonly Entry this[int index] => ref _entries[(_newest - index + 1) & _mask];

    /// <summary>The name of an entry.</summary>
    public ReadOnlySpan<byte> GetName(in Entry entry) => _bytes.AsSpan(entry.Offset, entry.NameLength);

    /// <summary>The value of an entry.</summary>
    public ReadOnlySpan<byte> GetValue(in Entry entry) => _bytes.AsSpan(entry.Offset + entry.NameLength, entry.ValueLength);

    /// <summary>Sets the maximum size (at most <see cref="Capacity"/>), evicting entries beyond it.</summary>
    public void SetMaxSize(int maxSize)
    {
        _maxSize = maxSize;
        EvictTo(maxSize);
    }

    /// <summary>Evicts every entry, as adding a field larger than the maximum size does (RFC 7541 section 4.4).</summary>
    public void Clear() => EvictTo(0);

    /// <summary>
    /// Adds a field as the newest entry, after evicting what it needs; a field larger than the maximum size empties the
    /// table and is not added (RFC 7541 section 4.4). <paramref name="name"/> and <paramref name="value"/> must not
    /// point into this table (an evicted or moved entry could be overwritten while they are copied).
    /// </summary>
    public void Insert(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value, byte code, bool valueMalformed)
    {
        int length = name.Length + value.Length;
        if ((long)length + EntryOverhead > _maxSize)
        {
            EvictTo(0);
            return;
        }

        EvictTo(_maxSize - length - EntryOverhead);
        if (_entries.Length == 0)
        {
            Rent();
        }

        if (_end + length > _bytes.Length)
        {
            Compact();
        }

        Span<byte> target = _bytes.AsSpan(_end, length);
        name.CopyTo(target);
        value.CopyTo(target[name.Length..]);
        _newest = (_newest + 1) & _mask;
        _entries[_newest] = new Entry(_end, name.Length, value.Length, code, valueMalformed);
        _end += length;
        _count++;
        _size += length + EntryOverhead;
    }

    /// <summary>Returns the rented buffers; the table is empty afterwards.</summary>
    public void Dispose()
    {
        _count = 0;
        _size = 0;
        _end = 0;
        if (_entries.Length > 0)
        {
            ArrayPool<byte>.Shared.Return(_bytes);
            ArrayPool<Entry>.Shared.Return(_entries);
            _bytes = [];
            _entries = [];
        }
    }

    private void EvictTo(int size)
    {
        while (_size > size)
        {
            ref Entry oldest = ref _entries[(_newest - _count + 1) & _mask];
            _size -= oldest.NameLength + oldest.ValueLength + EntryOverhead;
            _count--;
        }

        if (_count == 0)
        {
            _end = 0;
        }
    }

    // Moves the live bytes to the front of the buffer: they are contiguous, from the oldest entry to the end.
    private void Compact()
    {
        int start = _entries[(_newest - _count + 1) & _mask].Offset;
        _bytes.AsSpan(start, _end - start).CopyTo(_bytes);
        for (int i = 0; i < _count; i++)
        {
            _entries[(_newest - i) & _mask].Offset -= start;
        }

        _end -= start;
    }

    private void Rent()
    {
        // A table of C bytes holds at most C / 32 entries.
        int entries = (int)BitOperations.RoundUpToPowerOf2((uint)Math.Max(1, _capacity / EntryOverhead));
        _entries = ArrayPool<Entry>.Shared.Rent(entries);
        _mask = entries - 1;
        _bytes = ArrayPool<byte>.Shared.Rent(Math.Max(2 * _capacity, 64));
    }

    /// <summary>
    /// One entry: where its name and value are in the buffer, the field code its name resolved to (a slot, a
    /// pseudo-header, an unknown or an invalid name), and whether its value is one a request may not carry.
    /// </summary>
    internal struct Entry(int offset, int nameLength, int valueLength, byte code, bool valueMalformed)
    {
        public int Offset = offset;
        public readonly int NameLength = nameLength;
        public readonly int ValueLength = valueLength;
        public readonly byte Code = code;
        public readonly bool ValueMalformed = valueMalformed;
    }
}
