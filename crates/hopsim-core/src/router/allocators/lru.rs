//! Least recently used (SST Merlin's `hr_router`, `xbar_arb_lru.h`): one priority list over
//! every input VC of the switch. Each cycle the list is walked from its head, and an input VC
//! whose flit asks for an output is granted when neither its input port nor that output port
//! has been granted yet this cycle. The winners go to the list's end, the first winner last;
//! the others keep their order ahead of them.

/// Walk `list` (the switch's input VCs by local index, `port * vcs + vc`, most favoured
/// first), granting each entry whose request (`request(entry)`: its input and output port)
/// finds both free. Fills `winners` with the granted entries in grant order and moves them
/// to the end of `list`. `input_taken` and `output_taken` are working arrays, one flag per
/// port.
pub fn allocate(list: &mut [u16], request: impl Fn(u16) -> Option<(u16, u16)>, input_taken: &mut Vec<bool>, output_taken: &mut Vec<bool>, ports: usize, winners: &mut Vec<u16>) {
    for v in [&mut *input_taken, &mut *output_taken] {
        v.clear();
        v.resize(ports, false);
    }
    winners.clear();
    let mut kept = 0;
    for j in 0..list.len() {
        let entry = list[j];
        match request(entry) {
            Some((input, output)) if !input_taken[input as usize] && !output_taken[output as usize] => {
                input_taken[input as usize] = true;
                output_taken[output as usize] = true;
                winners.push(entry);
            }
            _ => {
                list[kept] = entry;
                kept += 1;
            }
        }
    }
    for (slot, &w) in list[kept..].iter_mut().zip(winners.iter().rev()) {
        *slot = w;
    }
}
