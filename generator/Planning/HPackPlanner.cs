using System;
using System.Collections.Generic;
using Falconet.Generator.Schema;

namespace Falconet.Generator.Planning;

/// <summary>
/// A static table entry and what a decoded request does with it: <see cref="RequestCode"/> is the request collection's
/// bit index, <see cref="HPackPlanner.ContentLengthCode"/>, <see cref="HPackPlanner.PseudoHeaderFlag"/> with the
/// pseudo-header's number, or <see cref="HPackPlanner.NoSlot"/> for a name outside the schema's request headers.
/// </summary>
internal sealed record StaticEntryPlan(int Index, string Name, string Value, int RequestCode, string RequestTarget, string PseudoMember);

/// <summary>The static index of the name of one response header (0 when the static table does not name it).</summary>
internal sealed record ResponseNamePlan(int BitIndex, string Name, int StaticIndex);

/// <summary>A response header value that is a whole static table entry: that entry's index.</summary>
internal sealed record ResponseValuePlan(int BitIndex, string Name, string Value, int StaticIndex);

/// <summary>A <c>:status</c> value with an entry of its own in the static table.</summary>
internal sealed record StatusPlan(int Status, int StaticIndex);

/// <summary>
/// One entry of the Huffman decoder's table, for one <see cref="HuffmanDecodePlan.PeekBits"/>-bit window of input: up to
/// two whole symbols that start it (<see cref="Count"/>; the first one <see cref="FirstBits"/> long, both together
/// <see cref="Consumed"/>), or, when the window is the start of a longer code, the tree node it ends at.
/// </summary>
internal sealed record HuffmanWindowPlan(int Count, int First, int Second, int FirstBits, int Consumed, int Node);

/// <summary>
/// The Huffman decoder: a table indexed by the next <see cref="PeekBits"/> bits, and for codes longer than that, the
/// internal nodes of the code tree below depth <see cref="PeekBits"/> (two children each: a node, or a symbol).
/// </summary>
internal sealed record HuffmanDecodePlan(int PeekBits, EquatableArray<HuffmanWindowPlan> Windows, EquatableArray<int> TreeChildren, EquatableArray<string> TreePaths);

/// <summary>Everything the HPACK files place: the static table with its slots, the response indexes and the Huffman code.</summary>
internal sealed record HPackPlan(
    EquatableArray<StaticEntryPlan> StaticTable,
    EquatableArray<ResponseNamePlan> ResponseNames,
    int ContentLengthIndex,
    EquatableArray<ResponseValuePlan> ResponseValues,
    EquatableArray<StatusPlan> Statuses,
    int StatusNameIndex,
    EquatableArray<HuffmanCode> Huffman,
    HuffmanDecodePlan Decode);

/// <summary>Plans the generated HPACK tables from the schema's static table, Huffman code and header collections.</summary>
internal static class HPackPlanner
{
    /// <summary>The request code of a static entry whose name is Content-Length, kept as a number outside the bit set.</summary>
    public const int ContentLengthCode = 64;

    /// <summary>Set in the request code of a pseudo-header; the low bits are its <c>PseudoHeader</c> value.</summary>
    public const int PseudoHeaderFlag = 0x80;

    /// <summary>The request code of a static entry whose name is not a request header of the schema.</summary>
    public const int NoSlot = 0xFF;

    /// <summary>The width of the Huffman decoder's window: 4096 entries, whole symbols of up to 12 bits in one lookup, two when they fit.</summary>
    public const int HuffmanPeekBits = 12;

    /// <summary>A tree child that is a symbol rather than a node.</summary>
    public const int TreeLeafFlag = 0x8000;

    public static HPackPlan Plan(HPackModel model, HeaderSetPlan request, HeaderSetPlan response)
    {
        var requestByName = ByName(request);
        var entries = new List<StaticEntryPlan>();
        var nameIndexes = new Dictionary<string, int>(StringComparer.Ordinal);
        for (int i = 0; i < model.StaticTable.Count; i++)
        {
            HPackStaticEntry entry = model.StaticTable[i];
            int index = i + 1;
            if (!nameIndexes.ContainsKey(entry.Name))
            {
                nameIndexes.Add(entry.Name, index);
            }

            int pseudo = Array.IndexOf(SchemaReader.PseudoHeaders, entry.Name);
            if (pseudo >= 0)
            {
                string member = MemberNames.ToPascalCase(entry.Name);
                entries.Add(new StaticEntryPlan(index, entry.Name, entry.Value, PseudoHeaderFlag | (pseudo + 1), "pseudo-header " + member, member));
            }
            else if (requestByName.TryGetValue(entry.Name, out HeaderPlan? header))
            {
                string target = header.IsContentLength ? "Content-Length, kept as a number" : "bit " + header.BitIndex.ToString(System.Globalization.CultureInfo.InvariantCulture) + " \"" + header.Name + "\"";
                entries.Add(new StaticEntryPlan(index, entry.Name, entry.Value, header.IsContentLength ? ContentLengthCode : header.BitIndex, target, string.Empty));
            }
            else
            {
                entries.Add(new StaticEntryPlan(index, entry.Name, entry.Value, NoSlot, "not a request header of the schema: matched by name", string.Empty));
            }
        }

        var names = new List<ResponseNamePlan>();
        var values = new List<ResponseValuePlan>();
        foreach (HeaderPlan header in response.Headers)
        {
            if (header.IsContentLength)
            {
                continue;
            }

            string lower = header.Name.ToLowerInvariant();
            names.Add(new ResponseNamePlan(header.BitIndex, header.Name, nameIndexes.TryGetValue(lower, out int nameIndex) ? nameIndex : 0));
            for (int i = 0; i < model.StaticTable.Count; i++)
            {
                HPackStaticEntry entry = model.StaticTable[i];
                if (entry.Value.Length > 0 && entry.Name == lower)
                {
                    values.Add(new ResponseValuePlan(header.BitIndex, header.Name, entry.Value, i + 1));
                }
            }
        }

        var statuses = new List<StatusPlan>();
        for (int i = 0; i < model.StaticTable.Count; i++)
        {
            HPackStaticEntry entry = model.StaticTable[i];
            if (entry.Name == ":status" && int.TryParse(entry.Value, System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out int status))
            {
                statuses.Add(new StatusPlan(status, i + 1));
            }
        }

        return new HPackPlan(
            EquatableArray.From(entries),
            EquatableArray.From(names),
            nameIndexes.TryGetValue("content-length", out int contentLength) ? contentLength : 0,
            EquatableArray.From(values),
            EquatableArray.From(statuses),
            nameIndexes.TryGetValue(":status", out int statusName) ? statusName : 0,
            model.Huffman,
            PlanDecoder(model.Huffman, HuffmanPeekBits));
    }

    /// <summary>
    /// The decoder's window table and the tree below it for any complete prefix code (FALC023 checked it): each window
    /// is walked through the code tree from the root, taking up to two whole symbols; a window that ends inside a code
    /// names the node it reached, from which the decoder continues bit by bit.
    /// </summary>
    public static HuffmanDecodePlan PlanDecoder(EquatableArray<HuffmanCode> codes, int peekBits)
    {
        var tree = new CodeTree(codes);

        // Number the internal nodes at depth peekBits and below, breadth first, so numbering is stable.
        var ids = new Dictionary<int, int>();
        var order = new List<int>();
        var paths = new List<string>();
        var queue = new Queue<(int Node, string Path)>();
        queue.Enqueue((0, string.Empty));
        while (queue.Count > 0)
        {
            (int node, string path) = queue.Dequeue();
            if (path.Length >= peekBits)
            {
                ids.Add(node, order.Count);
                order.Add(node);
                paths.Add(path);
            }

            for (int bit = 0; bit < 2; bit++)
            {
                int child = tree.Child(node, bit);
                if (!tree.IsLeaf(child))
                {
                    queue.Enqueue((child, path + (bit == 0 ? "0" : "1")));
                }
            }
        }

        var children = new List<int>(order.Count * 2);
        foreach (int node in order)
        {
            for (int bit = 0; bit < 2; bit++)
            {
                int child = tree.Child(node, bit);
                children.Add(tree.IsLeaf(child) ? TreeLeafFlag | tree.Symbol(child) : ids[child]);
            }
        }

        var windows = new List<HuffmanWindowPlan>(1 << peekBits);
        for (int window = 0; window < 1 << peekBits; window++)
        {
            int node = 0;
            int first = -1;
            int firstBits = 0;
            int second = -1;
            int consumed = 0;
            int reached = -1;
            for (int i = 0; i < peekBits; i++)
            {
                node = tree.Child(node, (window >> (peekBits - 1 - i)) & 1);
                if (!tree.IsLeaf(node))
                {
                    continue;
                }

                int symbol = tree.Symbol(node);
                if (first < 0)
                {
                    first = symbol;
                    firstBits = i + 1;
                    consumed = i + 1;
                    if (symbol == SchemaReader.EndOfString)
                    {
                        break;
                    }
                }
                else
                {
                    if (symbol != SchemaReader.EndOfString)
                    {
                        second = symbol;
                        consumed = i + 1;
                    }

                    break;
                }

                node = 0;
            }

            if (first < 0)
            {
                reached = ids[node];
            }

            windows.Add(first < 0
                ? new HuffmanWindowPlan(0, 0, 0, 0, peekBits, reached)
                : new HuffmanWindowPlan(second < 0 ? 1 : 2, first, second < 0 ? 0 : second, firstBits, consumed, 0));
        }

        return new HuffmanDecodePlan(peekBits, EquatableArray.From(windows), EquatableArray.From(children), EquatableArray.From(paths));
    }

    private static Dictionary<string, HeaderPlan> ByName(HeaderSetPlan plan)
    {
        var byName = new Dictionary<string, HeaderPlan>(StringComparer.OrdinalIgnoreCase);
        foreach (HeaderPlan header in plan.Headers)
        {
            byName[header.Name] = header;
        }

        return byName;
    }

    /// <summary>The code tree: node 0 is the root; a node's children are nodes or leaves (symbols).</summary>
    private sealed class CodeTree
    {
        private readonly List<int[]> _children = new() { new[] { -1, -1 } };
        private readonly List<int> _symbols = new() { -1 };

        public CodeTree(EquatableArray<HuffmanCode> codes)
        {
            for (int symbol = 0; symbol < codes.Count; symbol++)
            {
                HuffmanCode code = codes[symbol];
                int node = 0;
                for (int i = code.Bits - 1; i >= 0; i--)
                {
                    int bit = (int)((code.Code >> i) & 1);
                    if (_children[node][bit] < 0)
                    {
                        _children[node][bit] = _children.Count;
                        _children.Add(new[] { -1, -1 });
                        _symbols.Add(-1);
                    }

                    node = _children[node][bit];
                }

                _symbols[node] = symbol;
            }
        }

        public int Child(int node, int bit) => _children[node][bit];

        public bool IsLeaf(int node) => _symbols[node] >= 0;

        public int Symbol(int node) => _symbols[node];
    }
}
