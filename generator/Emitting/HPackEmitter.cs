using System.Globalization;
using System.Text;
using Falconet.Generator.Planning;
using Falconet.Generator.Schema;

namespace Falconet.Generator.Emitting;

/// <summary>Formats the HPACK plan: every table entry on a line of its own, with the text it stands for.</summary>
internal static class HPackEmitter
{
    // The layout of a decoder window entry; the generated class states it as constants for the runtime's decoder.
    private const int SecondShift = 8;
    private const int CountShift = 16;
    private const int FirstBitsShift = 20;
    private const int ConsumedShift = 24;

    public static HPackStaticTableView CreateStaticTableView(HPackPlan plan, FileView file)
    {
        var view = new HPackStaticTableView
        {
            File = file,
            Namespace = Namespace(file),
            Count = CSharpText.Int(plan.StaticTable.Count),
            StatusNameIndex = CSharpText.Int(plan.StatusNameIndex),
            ContentLengthIndex = CSharpText.Int(plan.ContentLengthIndex),
        };

        view.RequestSlotLines.Add("0xFF, // 0: not an index");
        foreach (StaticEntryPlan entry in plan.StaticTable)
        {
            string code = entry.RequestCode >= HPackPlanner.PseudoHeaderFlag && entry.RequestCode != HPackPlanner.NoSlot
                ? "0x80 | (byte)global::Falconet.Http.Http2.HPack.PseudoHeader." + entry.PseudoMember
                : entry.RequestCode == HPackPlanner.NoSlot ? "0xFF" : CSharpText.Int(entry.RequestCode);
            view.RequestSlotLines.Add(code + ", // " + CSharpText.Int(entry.Index) + " " + Field(entry.Name, entry.Value) + " -> " + entry.RequestTarget);
            view.NameLines.Add(CSharpText.Int(entry.Index) + " => " + CSharpText.StringLiteral(entry.Name) + "u8,");
            if (entry.Value.Length > 0)
            {
                view.ValueLines.Add(CSharpText.Int(entry.Index) + " => " + CSharpText.StringLiteral(entry.Value) + "u8,");
            }
        }

        foreach (ResponseNamePlan name in plan.ResponseNames)
        {
            string target = name.StaticIndex == 0
                ? "not in the static table"
                : CSharpText.Int(name.StaticIndex) + " " + CSharpText.Quote(plan.StaticTable[name.StaticIndex - 1].Name);
            view.ResponseNameLines.Add(CSharpText.Int(name.StaticIndex) + ", // bit " + CSharpText.Int(name.BitIndex) + " " + CSharpText.Quote(name.Name) + " -> " + target);
        }

        foreach (StatusPlan status in plan.Statuses)
        {
            view.StatusLines.Add(CSharpText.Int(status.Status) + " => " + CSharpText.Int(status.StaticIndex) + ", // "
                + Field(plan.StaticTable[status.StaticIndex - 1].Name, plan.StaticTable[status.StaticIndex - 1].Value));
        }

        ResponseValueCaseView? current = null;
        foreach (ResponseValuePlan value in plan.ResponseValues)
        {
            if (current is null || current.BitIndex != CSharpText.Int(value.BitIndex))
            {
                current = new ResponseValueCaseView { BitIndex = CSharpText.Int(value.BitIndex), Name = value.Name };
                view.ResponseValueCases.Add(current);
            }

            current.Lines.Add("if (value == " + CSharpText.StringLiteral(value.Value) + ") return " + CSharpText.Int(value.StaticIndex) + "; // "
                + Field(plan.StaticTable[value.StaticIndex - 1].Name, value.Value));
        }

        return view;
    }

    public static HPackHuffmanView CreateHuffmanView(HPackPlan plan, FileView file)
    {
        HuffmanDecodePlan decode = plan.Decode;
        var view = new HPackHuffmanView
        {
            File = file,
            Namespace = Namespace(file),
            PeekBits = CSharpText.Int(decode.PeekBits),
            WindowCount = CSharpText.Int(decode.Windows.Count),
            TreeNodeCount = CSharpText.Int(decode.TreePaths.Count),
        };

        for (int symbol = 0; symbol < plan.Huffman.Count; symbol++)
        {
            HuffmanCode code = plan.Huffman[symbol];
            ulong packed = ((ulong)code.Code << 8) | (uint)code.Bits;
            view.CodeLines.Add("0x" + packed.ToString("X10", CultureInfo.InvariantCulture) + "UL, // " + SymbolColumn(symbol) + " "
                + code.Bits.ToString("D2", CultureInfo.InvariantCulture) + " bits " + Grouped(SchemaReader.Bits(code)));
        }

        for (int window = 0; window < decode.Windows.Count; window++)
        {
            HuffmanWindowPlan entry = decode.Windows[window];
            string bits = Binary(window, decode.PeekBits);
            uint value;
            string meaning;
            if (entry.Count == 0)
            {
                value = ((uint)entry.Consumed << ConsumedShift) | (uint)entry.Node;
                meaning = bits + ": starts a longer code, node " + CSharpText.Int(entry.Node);
            }
            else
            {
                bool eos = entry.First == SchemaReader.EndOfString;
                value = ((uint)entry.Consumed << ConsumedShift) | ((uint)entry.FirstBits << FirstBitsShift)
                    | ((uint)(eos ? 3 : entry.Count) << CountShift) | ((uint)entry.Second << SecondShift) | (uint)(entry.First & 0xFF);
                // The window split where its codes end: "00000 00011 11: '0' 'a'" takes both codes, leaves the last bits.
                var parts = new System.Collections.Generic.List<string> { bits.Substring(0, entry.FirstBits) };
                if (entry.Consumed > entry.FirstBits)
                {
                    parts.Add(bits.Substring(entry.FirstBits, entry.Consumed - entry.FirstBits));
                }

                if (entry.Consumed < bits.Length)
                {
                    parts.Add(bits.Substring(entry.Consumed));
                }

                meaning = string.Join(" ", parts) + ": " + Symbol(entry.First) + (entry.Count == 2 ? " " + Symbol(entry.Second) : string.Empty);
            }

            view.WindowLines.Add("0x" + value.ToString("X8", CultureInfo.InvariantCulture) + ", // " + meaning);
        }

        for (int node = 0; node < decode.TreePaths.Count; node++)
        {
            int zero = decode.TreeChildren[2 * node];
            int one = decode.TreeChildren[(2 * node) + 1];
            view.TreeLines.Add(Child(zero) + ", " + Child(one) + ", // node " + CSharpText.Int(node) + " after " + decode.TreePaths[node]
                + ": 0 -> " + ChildText(zero) + ", 1 -> " + ChildText(one));
        }

        return view;
    }

    private static string Namespace(FileView file) => file.Namespace + ".Http2.HPack";

    private static string Field(string name, string value) => CSharpText.Quote(value.Length == 0 ? name : name + ": " + value);

    private static string Child(int child) => "0x" + child.ToString("X4", CultureInfo.InvariantCulture);

    private static string ChildText(int child) =>
        (child & HPackPlanner.TreeLeafFlag) != 0 ? Symbol(child & ~HPackPlanner.TreeLeafFlag) : "node " + CSharpText.Int(child);

    /// <summary>A symbol in a comment: the character quoted when it is printable ASCII, else its byte in hex; 256 is EOS.</summary>
    internal static string Symbol(int symbol)
    {
        if (symbol == SchemaReader.EndOfString)
        {
            return "EOS";
        }

        char c = (char)symbol;
        return c switch
        {
            '\'' => "'\\''",
            '\\' => "'\\\\'",
            _ when c >= ' ' && c <= '~' => "'" + c + "'",
            _ => "0x" + symbol.ToString("X2", CultureInfo.InvariantCulture),
        };
    }

    private static string SymbolColumn(int symbol) =>
        symbol.ToString(CultureInfo.InvariantCulture).PadLeft(3) + " " + Symbol(symbol);

    private static string Binary(int value, int bits)
    {
        var text = new StringBuilder(bits);
        for (int i = bits - 1; i >= 0; i--)
        {
            text.Append(((value >> i) & 1) != 0 ? '1' : '0');
        }

        return text.ToString();
    }

    // The bits in bytes, as RFC 7541 Appendix B prints them: |11111111|11000.
    private static string Grouped(string bits)
    {
        var text = new StringBuilder();
        for (int i = 0; i < bits.Length; i++)
        {
            if (i % 8 == 0)
            {
                text.Append('|');
            }

            text.Append(bits[i]);
        }

        return text.ToString();
    }
}
